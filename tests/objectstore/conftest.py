"""A real S3-compatible server (moto's server mode) on 127.0.0.1, started by the tests.

Skips where moto is not installed, unless ``IOTUNE_REQUIRE_S3=1`` (CI), which
makes a missing server a failure.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

#: moto accepts any keys; distinctive ones let tests grep for leaks
KEYS = {"AWS_ACCESS_KEY_ID": "IOTUNETESTKEYID", "AWS_SECRET_ACCESS_KEY": "iotune-test-secret"}


@dataclass(frozen=True)
class Server:
    host: str
    port: int

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _missing(why: str) -> None:
    if os.environ.get("IOTUNE_REQUIRE_S3") == "1":
        pytest.fail(f"IOTUNE_REQUIRE_S3=1 but {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[Server]:
    """moto's S3 server on a free port for the whole session."""
    try:
        import moto.server  # noqa: F401
    except ImportError as err:
        _missing(f"moto[server] is not installed ({err})")
    port = _free_port()
    cmd = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None:
                _missing(f"moto's server exited with {proc.returncode}")
            time.sleep(0.1)
    else:
        proc.kill()
        _missing("moto's server did not listen within 30 s")
    try:
        yield Server("127.0.0.1", port)
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def bucket(s3_server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new empty bucket on the server; credentials only in the environment."""
    import boto3

    for key, value in KEYS.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    name = f"iotune-{time.monotonic_ns()}"
    client = boto3.client("s3", endpoint_url=s3_server.endpoint, region_name="us-east-1")
    client.create_bucket(Bucket=name)
    return name


def _wait_listening(proc: subprocess.Popen, port: int, name: str, require: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None:
                _absent(require, f"{name} exited with {proc.returncode}")
            time.sleep(0.1)
    proc.kill()
    _absent(require, f"{name} did not listen within 30 s")


def _absent(require: str, why: str) -> None:
    if os.environ.get(require) == "1":
        pytest.fail(f"{require}=1 but {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def gcs_server() -> Iterator[Server]:
    """gcp-storage-emulator (PyPI) on a free port, in memory, for the whole session.

    It serves GCS's JSON API, which gcsfs speaks; obstore speaks the XML API, which
    it does not implement (HEAD, LIST and DELETE answer 501), so gs:// is tested here
    through the fsspec client.  Skips where it is missing unless IOTUNE_REQUIRE_GCS=1.
    """
    try:
        import gcp_storage_emulator  # noqa: F401
        import gcsfs  # noqa: F401
    except ImportError as err:
        _absent("IOTUNE_REQUIRE_GCS", f"gcp-storage-emulator or gcsfs is not installed ({err})")
    port = _free_port()
    code = "from gcp_storage_emulator.__main__ import main; main()"
    cmd = [sys.executable, "-c", code, "start", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(
        [*cmd, "--in-memory"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _wait_listening(proc, port, "gcp-storage-emulator", "IOTUNE_REQUIRE_GCS")
    try:
        yield Server("127.0.0.1", port)
    finally:
        proc.terminate()
        proc.wait(10)


def gcs_env(server: Server) -> dict[str, str]:
    """The environment a GCS client reads to reach the emulator (no credentials needed)."""
    return {"STORAGE_EMULATOR_HOST": server.endpoint}


def gcs_bucket(server: Server) -> str:
    """A new empty bucket on the emulator, made through the JSON API."""
    import json
    import urllib.request

    name = f"iotune-{time.monotonic_ns()}"
    request = urllib.request.Request(
        f"{server.endpoint}/storage/v1/b?project=iotune",
        data=json.dumps({"name": name}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    urllib.request.urlopen(request, timeout=10).close()
    return name


#: Azurite's well-known development account (public: it is in Azure's documentation)
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


def azurite_command() -> str | None:
    """Azurite's blob server: in IOTUNE_AZURITE_DIR (where .ci/run installs it), else on PATH."""
    import shutil

    where = Path(os.environ.get("IOTUNE_AZURITE_DIR") or Path.home() / ".cache/iotune/azurite")
    found = where / "node_modules" / ".bin" / "azurite-blob"
    return str(found) if found.exists() else shutil.which("azurite-blob")


@pytest.fixture(scope="session")
def azurite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Azurite's blob service (npm) on a free port for the whole session.

    Skips where it is missing unless IOTUNE_REQUIRE_AZURE=1.
    """
    command = azurite_command()
    if command is None:
        _absent("IOTUNE_REQUIRE_AZURE", "azurite is not installed (npm install azurite)")
    try:
        import adlfs  # noqa: F401
    except ImportError as err:
        _absent("IOTUNE_REQUIRE_AZURE", f"adlfs is not installed ({err})")
    port = _free_port()
    data = tmp_path_factory.mktemp("azurite")
    cmd = [command, "--silent", "--location", str(data), "--blobHost", "127.0.0.1"]
    cmd += ["--blobPort", str(port), "--skipApiVersionCheck", "--loose"]
    # no telemetry: it would try to reach the internet from the tests
    cmd.append("--disableTelemetry")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_listening(proc, port, "azurite", "IOTUNE_REQUIRE_AZURE")
    try:
        yield Server("127.0.0.1", port)
    finally:
        proc.terminate()
        proc.wait(10)


def azure_env(server: Server) -> dict[str, str]:
    """The environment obstore and adlfs read to reach Azurite with its account key."""
    return {
        "AZURE_STORAGE_ACCOUNT_NAME": AZURITE_ACCOUNT,
        "AZURE_STORAGE_ACCOUNT_KEY": AZURITE_KEY,
        "AZURE_STORAGE_ENDPOINT": f"{server.endpoint}/{AZURITE_ACCOUNT}",
    }


def azure_container(server: Server) -> str:
    """A new empty container on Azurite."""
    from azure.storage.blob import BlobServiceClient

    name = f"iotune-{time.monotonic_ns()}"
    connection = (
        f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"BlobEndpoint={server.endpoint}/{AZURITE_ACCOUNT};"
    )
    BlobServiceClient.from_connection_string(connection).create_container(name)
    return name
