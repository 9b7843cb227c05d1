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
