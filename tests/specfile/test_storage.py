"""The ``storage`` section: where trials write, and what a spec may not carry."""

from __future__ import annotations

from typing import Any

import pytest

from iotune.core.errors import SpecError
from iotune.model.spec import StorageSpec, Sweep
from iotune.specfile.parse import parse_spec

URL = "s3://bucket/some/prefix"


def make(storage: Any = None, *, backend: Any = "object", **sections: Any) -> Sweep:
    data = {"version": 1, "workload": {"shape": {"time": 8, "y": 16, "x": 16}}, "backend": backend}
    if storage is not None:
        data["storage"] = storage
    return parse_spec(data | sections)


def refused(field: str, *words: str, **kwargs: Any) -> str:
    with pytest.raises(SpecError) as caught:
        make(**kwargs)
    message = str(caught.value)
    assert caught.value.field == field, message
    assert "\n" not in message and all(w in message for w in words), message
    return message


def test_a_full_section_parses() -> None:
    storage = {
        "url": URL + "/",
        "endpoint": "http://127.0.0.1:9000",
        "region": "eu-west-1",
        "anonymous": False,
        "prices": {"GET": 4e-7, "PUT": 5e-6, "transfer_GB": 0.09},
    }
    spec = make(storage).storage
    assert spec == StorageSpec(
        URL,
        "http://127.0.0.1:9000",
        "eu-west-1",
        False,
        (("GET", 4e-7), ("PUT", 5e-6), ("transfer_GB", 0.09)),
    )
    assert (spec.scheme, spec.bucket, spec.prefix) == ("s3", "bucket", "some/prefix")


@pytest.mark.parametrize(
    ("url", "scheme", "bucket", "prefix"),
    [
        ("gs://b", "gs", "b", ""),
        ("az://container/p", "az", "container", "p"),
        ("file:///tmp/objects", "file", "", "/tmp/objects"),
    ],
)
def test_every_scheme(url: str, scheme: str, bucket: str, prefix: str) -> None:
    spec = make({"url": url}).storage
    assert (spec.scheme, spec.bucket, spec.prefix) == (scheme, bucket, prefix)


@pytest.mark.parametrize("key", ["secret_access_key", "access_key_id", "token", "key", "password"])
def test_credentials_are_refused_and_said_where_they_belong(key: str) -> None:
    storage = {"url": URL, key: "SEKRET-VALUE"}
    message = refused(f"storage.{key}", "AWS_ACCESS_KEY_ID", "~/.aws", storage=storage)
    assert "SEKRET" not in message  # the refusal never repeats what it refused


def test_credentials_in_the_url_are_refused() -> None:
    message = refused("storage.url", "credentials", storage={"url": "s3://AKIA:SEKRET@bucket/p"})
    assert "SEKRET" not in message
    storage = {"url": URL, "endpoint": "http://k:SEKRET@h"}
    assert "SEKRET" not in refused("storage.endpoint", "user info", storage=storage)


@pytest.mark.parametrize(
    ("storage", "field", "words"),
    [
        ({"url": "ftp://x/y"}, "storage.url", ("ftp", "s3://", "gs://", "az://", "file://")),
        ({"url": "s3:///p"}, "storage.url", ("names no bucket",)),
        ({"url": "bucket/p"}, "storage.url", ("not a URL",)),
        ({"url": "file://relative"}, "storage.url", ("absolute path",)),
        ({"endpoint": "http://h"}, "storage.url", ("required",)),
        ({"url": URL, "endpoint": "h:9000"}, "storage.endpoint", ("http://",)),
        ({"url": URL, "anonymous": "yes"}, "storage.anonymous", ("true or false",)),
        ({"url": URL, "prices": {"GET": -1}}, "storage.prices.GET", ("0 or more",)),
        ({"url": URL, "prices": {"COPY": 1}}, "storage.prices.COPY", ("transfer_GB",)),
        ({"url": URL, "bucket": "b"}, "storage.bucket", ("url, endpoint",)),
    ],
)
def test_bad_values_name_the_field_and_what_is_allowed(storage, field, words) -> None:
    refused(field, *words, storage=storage)


def test_object_backends_need_storage_and_local_ones_refuse_it() -> None:
    refused("storage.url", "zarr-object", "s3://bucket/prefix", backend="zarr-object")
    message = refused("backend", "netcdf4", storage={"url": URL}, backend=["netcdf4", "object"])
    assert all(name in message for name in ("object", "zarr-object", "hdf5-object"))


def test_warm_reads_do_not_apply_to_object_storage() -> None:
    refused("measure.cache", "warm", "cold", storage={"url": URL}, measure={"cache": "warm"})


def test_the_store_is_part_of_the_digest_and_no_credential_is() -> None:
    local = make(backend="netcdf4").digest()
    here, there = make({"url": URL}).digest(), make({"url": "s3://other/p"}).digest()
    assert len({local, here, there}) == 3
    assert "secret" not in str(make({"url": URL}).storage.key())
    # a sweep without storage keeps the digest it always had
    assert make(backend="netcdf4").digest() == local


def test_object_store_knobs_are_checked_like_any_parameter() -> None:
    refused("parameters.part_size", "5MiB", storage={"url": URL}, parameters={"part_size": "1MiB"})
    refused(
        "parameters.client",
        "obstore, fsspec",
        storage={"url": URL},
        backend="zarr-object",
        parameters={"client": "boto"},
    )
    sweep = make({"url": URL}, backend="hdf5-object", parameters={"cache_type": ["none", "bytes"]})
    assert sweep.swept[0].values == ("none", "bytes")


def test_the_named_object_backends_are_the_ones_that_store_objects() -> None:
    from iotune.backends import BUILTINS, OBJECT_BUILTINS, get_backend

    storing = {n for n in BUILTINS if getattr(get_backend(n), "object_storage", False)}
    assert storing == set(OBJECT_BUILTINS)
