"""Where on an object store a trial's objects live, and the clients that reach it.

A :class:`Target` is the ``storage`` section of a sweep bound to one scratch
area: every object a run creates lies under ``PREFIX/iotune-scratch-XXXX/``,
mirroring the local scratch directory, so removing the scratch removes them.
Credentials are never passed here: obstore reads the ``AWS_*``, ``GOOGLE_*``
and ``AZURE_*`` variables, and where they are absent the botocore chain
(environment, ``~/.aws/credentials``, ``~/.aws/config``, SSO) is asked, as
s3fs asks it itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import PurePosixPath
from typing import Any

from iotune.model.spec import StorageSpec

#: where each scheme's clients find an endpoint in the environment, in their order
ENDPOINT_VARIABLES = {
    "s3": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"),
    "gs": ("GOOGLE_BASE_URL", "STORAGE_EMULATOR_HOST"),
    "az": ("AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT"),
}
#: connection and request limits: an unreachable endpoint fails in seconds, not minutes
CONNECT_TIMEOUT_S = 3
REQUEST_TIMEOUT_S = 120


@dataclass(frozen=True)
class Target:
    """An object store, and the key prefix under which a run keeps its objects."""

    spec: StorageSpec
    #: the run's own area under the spec's prefix (``iotune-scratch-XXXX``), or empty
    area: str = ""

    def key(self, *parts: str) -> str:
        """The object key (or ``file://`` path below the root) of ``parts`` in this area."""
        base = [p for p in (self.spec.prefix if self.spec.scheme != "file" else "", self.area)]
        return str(PurePosixPath(*[p for p in (*base, *parts) if p]))

    def url(self, key: str) -> str:
        """A URL a user can paste (``s3://bucket/key``)."""
        if self.spec.scheme == "file":
            return f"file://{self.spec.prefix}/{key}"
        return f"{self.spec.scheme}://{self.spec.bucket}/{key}"

    def describe(self) -> dict[str, str]:
        """Provenance: scheme, endpoint, bucket and prefix; never a credential."""
        spec = self.spec
        return {
            "storage_url": spec.url,
            "storage_endpoint": spec.endpoint or "(the provider's default)",
            "storage_region": spec.region or "",
            "storage_bucket": spec.bucket,
            "storage_prefix": spec.prefix,
            "storage_area": self.area,
            "storage_anonymous": str(spec.anonymous).lower(),
        }

    # -- obstore --------------------------------------------------------------------

    def obstore(
        self, *, prefix: str = "", retries: int = 0, timeout_s: float = REQUEST_TIMEOUT_S
    ) -> Any:
        """An obstore store at ``prefix`` below the bucket's root (keys from :meth:`key`).

        ``timeout_s`` bounds each request.  ``retries`` 0 turns obstore's own
        retries off: iotune retries throttled requests itself
        (:mod:`iotune.objectstore.retry`) so that each one is counted, never
        hidden in a timing.
        """
        from obstore.store import AzureStore, GCSStore, LocalStore, S3Store

        spec = self.spec
        retry: Any = {
            "max_retries": retries,
            "backoff": {
                "init_backoff": timedelta(milliseconds=100),
                "max_backoff": timedelta(seconds=5),
                "base": 2,
            },
            "retry_timeout": timedelta(seconds=60),
        }
        options: Any = {
            "connect_timeout": timedelta(seconds=CONNECT_TIMEOUT_S),
            "timeout": timedelta(seconds=timeout_s),
        }
        endpoint = self.endpoint()
        if endpoint and endpoint.startswith("http://"):
            options["allow_http"] = True
        if spec.scheme == "file":
            root = f"{spec.prefix}/{prefix}" if prefix else spec.prefix
            return LocalStore(root, mkdir=True)
        if spec.scheme == "s3":
            config: Any = {"region": spec.region or _region()}
            if spec.endpoint:
                config["endpoint"] = spec.endpoint
            if spec.anonymous:
                config["skip_signature"] = True
            provider = None if spec.anonymous or _env_keys() else _botocore_provider()
            return S3Store(
                spec.bucket,
                prefix=prefix or None,
                config=config,
                client_options=options,
                retry_config=retry,
                credential_provider=provider,
            )
        gcs_or_az: Any = GCSStore if spec.scheme == "gs" else AzureStore
        other: Any = {"skip_signature": True} if spec.anonymous else {}
        if spec.endpoint:  # else obstore reads GOOGLE_BASE_URL or AZURE_STORAGE_ENDPOINT itself
            other["base_url" if spec.scheme == "gs" else "endpoint"] = spec.endpoint
        return gcs_or_az(
            spec.bucket,
            prefix=prefix or None,
            config=other or None,
            client_options=options,
            retry_config=retry,
        )

    def endpoint(self) -> str | None:
        """The endpoint requests go to: the spec's, else the one the environment names.

        The environment's is the one each client would read itself
        (:data:`ENDPOINT_VARIABLES`); it is looked up here to allow plain HTTP to it
        (an emulator, a local MinIO).
        """
        import os

        if self.spec.endpoint:
            return self.spec.endpoint
        for name in ENDPOINT_VARIABLES.get(self.spec.scheme, ()):
            if os.environ.get(name):
                return os.environ[name]
        return None

    # -- fsspec ---------------------------------------------------------------------

    def fsspec(self, *, session: Any = None, asynchronous: bool = False) -> Any:
        """A new fsspec filesystem for the store: never a cached instance.

        ``session``: an aiobotocore session whose event handlers meter the
        requests (:mod:`iotune.objectstore.clients`).
        """
        spec = self.spec
        if spec.scheme == "file":
            from fsspec.implementations.local import LocalFileSystem

            return LocalFileSystem(skip_instance_cache=True)
        if spec.scheme == "gs":
            return self._gcsfs(asynchronous=asynchronous)
        if spec.scheme == "az":
            return self._adlfs(asynchronous=asynchronous)
        import s3fs

        client_kwargs: dict[str, Any] = {"region_name": spec.region or _region()}
        if spec.endpoint:
            client_kwargs["endpoint_url"] = spec.endpoint
        return s3fs.S3FileSystem(
            anon=spec.anonymous,
            client_kwargs=client_kwargs,
            config_kwargs={
                "connect_timeout": CONNECT_TIMEOUT_S,
                "read_timeout": REQUEST_TIMEOUT_S,
                "retries": {"max_attempts": 5, "mode": "standard"},
            },
            session=session,
            skip_instance_cache=True,
            asynchronous=asynchronous,
            use_listings_cache=False,
        )

    def _gcsfs(self, *, asynchronous: bool) -> Any:
        """gcsfs's JSON-API client (its plain class: the default one probes gRPC first).

        Anonymous with ``anonymous: true`` and, as Google's own clients do, when
        ``STORAGE_EMULATOR_HOST`` names an emulator.
        """
        import os

        from gcsfs.core import GCSFileSystem

        endpoint = self.endpoint()
        anonymous = self.spec.anonymous or bool(os.environ.get("STORAGE_EMULATOR_HOST"))
        if endpoint and not endpoint.startswith(("http://", "https://")):
            endpoint = f"http://{endpoint}"  # STORAGE_EMULATOR_HOST may be host:port
        return GCSFileSystem(
            endpoint_url=endpoint,
            token="anon" if anonymous else None,
            skip_instance_cache=True,
            asynchronous=asynchronous,
            timeout=REQUEST_TIMEOUT_S,
        )

    def _adlfs(self, *, asynchronous: bool) -> Any:
        """adlfs; its credentials from the ``AZURE_STORAGE_*`` variables, as obstore's."""
        import os

        from adlfs import AzureBlobFileSystem

        endpoint = self.endpoint()
        name, key = (
            os.environ.get("AZURE_STORAGE_ACCOUNT_NAME"),
            os.environ.get("AZURE_STORAGE_ACCOUNT_KEY"),
        )
        connection = None
        if endpoint and name and key and not os.environ.get("AZURE_STORAGE_CONNECTION_STRING"):
            protocol = endpoint.split("://", 1)[0]
            connection = (
                f"DefaultEndpointsProtocol={protocol};AccountName={name};AccountKey={key};"
                f"BlobEndpoint={endpoint};"
            )
        return AzureBlobFileSystem(
            connection_string=connection,
            anon=self.spec.anonymous or None,
            skip_instance_cache=True,
            asynchronous=asynchronous,
        )

    def fsspec_path(self, key: str) -> str:
        """The path fsspec takes for ``key``."""
        if self.spec.scheme == "file":
            return f"{self.spec.prefix}/{key}"
        return f"{self.spec.bucket}/{key}"


def _env_keys() -> bool:
    import os

    return bool(os.environ.get("AWS_ACCESS_KEY_ID"))


def _region() -> str:
    import os

    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"


def _botocore_provider() -> Any:
    """Credentials from the user's standard files (``~/.aws``), as s3fs would find them.

    None when botocore finds none either: obstore then signs nothing it cannot,
    and the pre-flight check reports the refusal.
    """
    import botocore.session

    credentials = botocore.session.get_session().get_credentials()
    if credentials is None:
        return None
    frozen = credentials.get_frozen_credentials()

    def provide() -> dict[str, Any]:
        found: dict[str, Any] = {
            "access_key_id": frozen.access_key,
            "secret_access_key": frozen.secret_key,
        }
        if frozen.token:
            found["token"] = frozen.token
        found["expires_at"] = None
        return found

    return provide
