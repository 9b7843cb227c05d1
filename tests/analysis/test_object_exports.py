"""Exports of the object-store backends, run against the tests' S3 server and read back.

Each export is run as printed, in a fresh interpreter whose only credentials are the
environment's (the ``bucket`` fixture's keys); the objects it leaves are checked with boto3.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iotune.analysis import exports
from iotune.analysis.report import _TITLES
from iotune.backends.exports_base import Target
from iotune.backends.object import exports as object_exports
from iotune.model.spec import StorageSpec
from tests.objectstore.conftest import KEYS, Server

TARGET = Target("tas", ("time", "y", "x"), (8, 64, 64), "float32")
MiB = 2**20
#: the array every script writes, made the same way in the test and in the script
DATA = "data = np.arange(8 * 64 * 64, dtype='float32').reshape(8, 64, 64) / 7"


def storage(server: Server, bucket: str) -> StorageSpec:
    return StorageSpec(f"s3://{bucket}/exports", server.endpoint, "us-east-1")


def run_python(code: str, tmp_path: Path) -> None:
    """``code`` in a new interpreter in ``tmp_path``, with the environment's credentials."""
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, f"{done.stderr}\n--- script:\n{code}"


#: the names of the object-store exports, whichever backend
OBJECT_EXPORTS = {**object_exports.ZARR, **object_exports.HDF5, **object_exports.RAW}


def made(settings: dict[str, Any], where: StorageSpec, target: Target = TARGET) -> dict[str, str]:
    """Every export of ``settings`` as text; none may be unavailable or hold a credential."""
    found = exports.all_exports(settings, target, storage=where)
    texts = {name: export.get("text", "") for name, export in found.items()}
    for name in (n for n in found if n in OBJECT_EXPORTS):
        assert texts[name], found[name]
        assert not any(secret in texts[name] for secret in KEYS.values()), name
        assert texts[name].startswith("# credentials: from the environment"), name
    return texts


def keys(server: Server, bucket: str) -> dict[str, dict[str, Any]]:
    import boto3

    client = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1")
    listed = client.list_objects_v2(Bucket=bucket).get("Contents", [])
    return {o["Key"]: o for o in listed}


@pytest.mark.parametrize("client", ["obstore", "fsspec"])
def test_zarr_object_exports_write_and_read_back(
    client: str, tmp_path: Path, s3_server: Server, bucket: str
) -> None:
    settings = {"backend": "zarr-object", "chunks": "4x32x32", "shards": "8x64x64"}
    settings |= {"codec": "zstd", "level": 3, "shuffle": "byte", "shard_index": "start"}
    settings |= {"client": client, "request_concurrency": 3}
    settings["consolidated"] = "on" if client == "obstore" else "off"
    texts = made(settings, storage(s3_server, bucket))
    write = texts["zarr_object_write"].replace("# arr[...] = data", "arr[...] = data")
    check = """
assert zarr.config.get('async.concurrency') == 3
np.testing.assert_array_equal(ds['tas'].values, data)
assert ds['tas'].dims == ('time', 'y', 'x')
meta = zarr.open_array(store, path='tas', mode='r').metadata.to_dict()
assert meta['codecs'][0]['configuration']['index_location'] == 'start'
assert [c['name'] for c in meta['codecs'][0]['configuration']['codecs'][1:]] == (
    ['numcodecs.shuffle', 'zstd'])
"""
    script = f"import numpy as np\n{DATA}\n{write}\n{texts['zarr_object_read']}\n{check}"
    run_python(script, tmp_path)
    stored = keys(s3_server, bucket)
    assert "exports/tas.zarr/tas/c/0/0/0" in stored  # one shard object holds every chunk
    assert {"exports/tas.zarr/zarr.json", "exports/tas.zarr/tas/zarr.json"} <= set(stored)
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_server.endpoint, region_name="us-east-1")
    root = s3.get_object(Bucket=bucket, Key="exports/tas.zarr/zarr.json")["Body"].read()
    consolidated = json.loads(root).get("consolidated_metadata")
    assert (consolidated is not None) == (client == "obstore")  # consolidated on: obstore's


def test_hdf5_object_exports_upload_and_read_back(
    tmp_path: Path, s3_server: Server, bucket: str
) -> None:
    settings = {"backend": "hdf5-object", "chunks": "4x32x32", "codec": "zlib", "level": 1}
    settings |= {"shuffle": "byte", "page_size": MiB, "page_buffer": 2 * MiB}
    settings |= {"chunk_cache": MiB, "cache_type": "blockcache", "read_block_size": MiB}
    settings |= {"part_size": 5 * MiB, "request_concurrency": 2}
    texts = made(settings, storage(s3_server, bucket))
    assert "chunksize=5242880,  # 5MiB parts" in texts["hdf5_object_upload"]
    # h5py's own file has no dimension scales: xarray names its dimensions itself
    xarray = texts["hdf5_object_xarray"].replace("'h5netcdf'", "'h5netcdf', phony_dims='sort'")
    check = """
np.testing.assert_array_equal(dset[...], data)
assert h5.id.get_access_plist().get_page_buffer_size()[0] == 2 * 1024 * 1024
assert dset.id.get_access_plist().get_chunk_cache()[1] == 1024 * 1024
assert f.cache.__class__.__name__ == 'BlockCache' and f.blocksize == 1024 * 1024
h5.close()
"""
    script = "\n".join(
        [
            f"import numpy as np\n{DATA}\npath = 'local.h5'",
            texts["h5py_create_dataset"],
            "dset[...] = data\nf.close()",
            texts["hdf5_object_upload"],
            texts["hdf5_object_read"],
            check,
            xarray,
            "np.testing.assert_array_equal(ds['tas'].values, data)",
        ]
    )
    run_python(script, tmp_path)
    stored = keys(s3_server, bucket)
    assert stored["exports/tas.h5"]["Size"] == (tmp_path / "local.h5").stat().st_size


@pytest.mark.skipif(not shutil.which("h5repack"), reason="h5repack not installed (hdf5-tools)")
def test_h5repack_pages_a_file_that_the_object_read_then_buffers(
    tmp_path: Path, s3_server: Server, bucket: str
) -> None:
    import h5py

    settings = {"backend": "hdf5-object", "chunks": "4x32x32", "codec": "none"}
    settings |= {"page_size": MiB, "page_buffer": 4 * MiB}
    texts = made(settings, storage(s3_server, bucket))
    assert f"h5repack -S PAGE -G {MiB}" in texts["hdf5_object_upload"]  # named in a comment
    with h5py.File(tmp_path / "in.h5", "w") as f:  # a file written without paging
        f["tas"] = np.ones(TARGET.shape, "float32")
    argv = texts["h5repack"].split()
    assert argv[:5] == ["h5repack", "-S", "PAGE", "-G", str(MiB)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    read = texts["hdf5_object_read"] + "\nassert float(dset[...].sum()) == 8 * 64 * 64"
    run_python(f"path = 'out.h5'\n{texts['hdf5_object_upload']}\n{read}", tmp_path)
    with h5py.File(tmp_path / "out.h5") as f:
        assert f.id.get_create_plist().get_file_space_page_size() == MiB


def test_object_exports_put_in_parts_and_get_ranges(
    tmp_path: Path, s3_server: Server, bucket: str
) -> None:
    big = Target("tas", ("time", "y", "x"), (24, 256, 256), "float32")  # 6 MiB: two parts
    settings = {"backend": "object", "part_size": 5 * MiB, "request_concurrency": 2}
    settings["coalesce"] = 64 * 1024
    texts = made(settings, storage(s3_server, bucket), big)
    assert set(texts) == {"object_put", "object_get", "object_get_ranges"}  # no chunk exports
    assert "coalesce=65536" in texts["object_get_ranges"]
    script = "\n".join(
        [
            "import numpy as np",
            "blob = np.random.default_rng(0).bytes(6 * 1024 * 1024)",
            "path = 'local.bin'\nopen(path, 'wb').write(blob)",
            texts["object_put"],
            texts["object_get"],
            "assert data == blob",
            "starts, lengths = [0, 70_000, 5_000_000], [1000, 1000, 2_000_000]",
            texts["object_get_ranges"],
            "assert [bytes(p) for p in pieces] == [blob[s:s + n] for s, n in zip(starts, lengths)]",
        ]
    )
    run_python(script, tmp_path)
    stored = keys(s3_server, bucket)["exports/tas.bin"]
    assert stored["Size"] == 6 * MiB
    assert stored["ETag"].strip('"').endswith("-2")  # a multipart upload of two parts


def test_exports_on_a_local_directory_run(tmp_path: Path) -> None:
    """``file://`` storage: obstore's LocalStore, no credentials; the s3fs exports say why not."""
    where = StorageSpec(f"file://{tmp_path}/store")
    zarr_settings = {"backend": "zarr-object", "chunks": "4x32x32", "codec": "zlib", "level": 1}
    zarr_texts = exports.all_exports(zarr_settings | {"consolidated": "on"}, TARGET, storage=where)
    raw = exports.all_exports({"backend": "object", "part_size": MiB}, TARGET, storage=where)
    fsspec = exports.all_exports(zarr_settings | {"client": "fsspec"}, TARGET, storage=where)
    assert "s3://" in fsspec["zarr_object_write"]["unavailable"]
    write = zarr_texts["zarr_object_write"]["text"].replace("# arr[...] = data", "arr[...] = data")
    script = "\n".join(
        [
            f"import numpy as np\n{DATA}",
            write,
            zarr_texts["zarr_object_read"]["text"],
            "np.testing.assert_array_equal(ds['tas'].values, data)",
            "path = 'local.bin'\ndata.tofile(path)",
            raw["object_put"]["text"],
            raw["object_get"]["text"],
            "assert data == open(path, 'rb').read()",
        ]
    )
    assert "# credentials: none" in write
    run_python(script, tmp_path)
    assert (tmp_path / "store" / "tas.bin").stat().st_size == 8 * 64 * 64 * 4
    assert (tmp_path / "store" / "tas.zarr" / "tas" / "zarr.json").exists()


def test_exports_say_where_credentials_come_from_and_name_none() -> None:
    """Anonymous, default-endpoint and GCS stores; a placeholder when no store is known."""
    anonymous = StorageSpec("s3://open-data/era5", anonymous=True)
    found = exports.all_exports({"backend": "hdf5-object"}, TARGET, storage=anonymous)
    assert "fs = s3fs.S3FileSystem(anon=True)\n" in found["hdf5_object_read"]["text"]
    assert "cache_type='readahead', block_size=5242880" in found["hdf5_object_read"]["text"]
    raw = exports.all_exports({"backend": "object"}, TARGET, storage=anonymous)["object_get"]
    assert "S3Store('open-data', prefix='era5', skip_signature=True)" in raw["text"]
    assert "allow_http" not in raw["text"]  # https: the default endpoint
    gcs = StorageSpec("gs://bucket/p")
    text = exports.all_exports({"backend": "object"}, TARGET, storage=gcs)["object_put"]["text"]
    assert "obstore.store.GCSStore('bucket', prefix='p')" in text
    assert "GOOGLE_APPLICATION_CREDENTIALS" in text
    placeholder = exports.all_exports({"backend": "zarr-object"}, TARGET)
    assert "S3Store('BUCKET', prefix='PREFIX/tas.zarr')" in placeholder["zarr_object_read"]["text"]
    assert "async.concurrency': 10" in placeholder["zarr_object_read"]["text"]  # the default


def test_recommend_on_an_object_store_sweep_prints_its_exports_and_no_credential(
    tmp_path: Path, s3_server: Server, bucket: str
) -> None:
    from iotune.analysis.report import render_json, render_text
    from iotune.app import api
    from iotune.specfile.parse import load_spec_text

    spec = f"""\
version: 1
name: objects
workload: {{shape: {{time: 8, y: 64, x: 64}}, dtype: float32}}
backend: [object, zarr-object, hdf5-object]
parameters: {{chunks: [[4, 32, 32]], request_concurrency: 2}}
read: {{patterns: [full]}}
measure: {{repeats: 1, noise_probes: 0}}
storage: {{url: "s3://{bucket}/runs", endpoint: "{s3_server.endpoint}", region: us-east-1}}
"""
    ds = api.run(load_spec_text(spec), out=tmp_path / "out", progress=False)
    assert (ds.status == "ok").all(), ds.error.values
    # each backend's exports, at the spec's prefix and endpoint (not the run's removed area)
    wanted = {
        "object": (["object_put", "object_get", "object_get_ranges"], "prefix='runs', endpoint"),
        "zarr-object": (["zarr_object_write", "zarr_object_read"], "prefix='runs/data.zarr'"),
        "hdf5-object": (
            ["hdf5_object_upload", "hdf5_object_read", "hdf5_object_xarray"],
            f"'{bucket}/runs/data.h5'",
        ),
    }
    for backend, (names, where) in wanted.items():
        rec = api.recommend(ds.sel(backend=[backend]), objective="read:full")
        text, data = render_text(rec), render_json(rec)
        assert all("text" in rec.exports[name] for name in names), rec.exports
        assert all(f"  {_TITLES[name]}:" in text for name in names)  # each under its title
        for secret in KEYS.values():
            assert secret not in text and secret not in data, backend
        assert "# credentials: from the environment" in text
        assert where in text and repr(s3_server.endpoint) in text, text
        assert "iotune-scratch" not in text
        if backend == "zarr-object":  # the recommended store, written and read back
            write = rec.exports["zarr_object_write"]["text"].replace("# arr[", "arr[")
            read = rec.exports["zarr_object_read"]["text"]
            check = "np.testing.assert_array_equal(ds['data'].values, data)"
            run_python(f"import numpy as np\n{DATA}\n{write}\n{read}\n{check}", tmp_path)
