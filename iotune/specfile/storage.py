"""The ``storage`` section: an object store (or ``file://`` directory) for the trials.

Credentials are refused here with a line saying where they belong: a spec is
copied into results, journals and notebooks, and a key in it would travel with
them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.model.checks import fail, mapping
from iotune.model.spec import PRICE_KEYS, STORAGE_SCHEMES, StorageSpec

KEYS = ("url", "endpoint", "region", "anonymous", "prices")
#: keys a user might reach for: named so the refusal can say where credentials go
CREDENTIAL_KEYS = (
    "key",
    "secret",
    "token",
    "access_key",
    "access_key_id",
    "secret_key",
    "secret_access_key",
    "session_token",
    "password",
    "credentials",
    "account_key",
    "sas_token",
)
WHERE = (
    "credentials are never read from a spec (it is copied into results): set "
    "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or GOOGLE_*, AZURE_*) in the environment, or "
    "use ~/.aws/credentials"
)


def parse_storage(value: object) -> StorageSpec:
    """Validate the ``storage`` section."""
    if isinstance(value, Mapping):
        for key in value:
            if str(key).lower() in CREDENTIAL_KEYS:
                raise fail(f"storage.{key}", WHERE)
    data = mapping(value, "storage", KEYS)
    if "url" not in data:
        raise fail("storage.url", "required, e.g. s3://bucket/prefix")
    url = _url(data["url"])
    endpoint = _endpoint(data.get("endpoint"))
    region = data.get("region")
    if region is not None and (not isinstance(region, str) or not region):
        raise fail("storage.region", f"expected a region name, got {region!r}")
    anonymous = data.get("anonymous", False)
    if not isinstance(anonymous, bool):
        raise fail("storage.anonymous", f"expected true or false, got {anonymous!r}")
    return StorageSpec(url, endpoint, region, anonymous, _prices(data.get("prices")))


def _url(value: object) -> str:
    allowed = ", ".join(f"{s}://" for s in STORAGE_SCHEMES)
    if not isinstance(value, str) or "://" not in value:
        raise fail("storage.url", f"{value!r} is not a URL; allowed schemes: {allowed}")
    scheme, rest = value.split("://", 1)
    if scheme not in STORAGE_SCHEMES:
        raise fail("storage.url", f"scheme {scheme!r} is not allowed; allowed: {allowed}")
    if "@" in rest.split("/", 1)[0] or "?" in rest:
        # not echoed: what is before the @ is likely a key
        raise fail("storage.url", f"the URL carries user info (name@) or a query; {WHERE}")
    if scheme == "file":
        if not rest.startswith("/"):
            raise fail("storage.url", f"{value!r}: file:// needs an absolute path")
    elif not rest.split("/", 1)[0]:
        raise fail("storage.url", f"{value!r} names no bucket, e.g. {scheme}://bucket/prefix")
    return value.rstrip("/")


def _endpoint(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise fail("storage.endpoint", f"expected an http:// or https:// URL, got {value!r}")
    if "@" in value.split("://", 1)[1].split("/", 1)[0]:
        raise fail("storage.endpoint", f"the URL carries user info (name@); {WHERE}")
    return value.rstrip("/")


def _prices(value: object) -> tuple[tuple[str, float], ...]:
    if value is None:
        return ()
    data: Mapping[str, Any] = mapping(value, "storage.prices", PRICE_KEYS)
    prices = []
    for key, price in data.items():
        if isinstance(price, bool) or not isinstance(price, int | float) or price < 0:
            raise fail(f"storage.prices.{key}", f"expected a price of 0 or more, got {price!r}")
        prices.append((key, float(price)))
    return tuple(sorted(prices))


def check_backends(storage: StorageSpec | None, backends: tuple[str, ...]) -> None:
    """Object-store backends only with ``storage``, and only they with it."""
    from iotune.backends import backend_names, on_object_storage

    if storage is not None:
        local = [b for b in backends if not on_object_storage(b)]
        if local:
            object_backends = [n for n in backend_names() if on_object_storage(n)]
            raise fail(
                "backend",
                f"{', '.join(local)} writes local files, not objects at {storage.url}; "
                f"with storage allowed: {', '.join(object_backends)}",
            )
        return
    remote = [b for b in backends if on_object_storage(b)]
    if remote:
        raise fail(
            "storage.url",
            f"required by backend {', '.join(remote)}, e.g. storage: {{url: s3://bucket/prefix}}",
        )
