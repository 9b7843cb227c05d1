"""A store iotune cannot use stops the run before any trial: one line, exit 2, nothing left.

And a run stopped by SIGTERM in the middle of an upload leaves no object and no
incomplete multipart upload behind.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.objectstore.conftest import KEYS, Server, _free_port
from tests.objectstore.proxy import latency
from tests.objectstore.test_run import iotune, objects

SPEC = {
    "version": 1,
    "workload": {"shape": {"time": 4, "y": 32, "x": 32}, "dtype": "int16"},
    "backend": "object",
    "measure": {"repeats": 1},
}


def _run(tmp_path: Path, storage: dict, env: dict | None = None):
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC | {"storage": storage}))
    out = tmp_path / "out"
    started = time.monotonic()
    if env is None:
        done = iotune("run", str(spec), "-o", str(out))
    else:
        done = subprocess.run(
            [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
    return done, time.monotonic() - started, out


def _refused(done, elapsed: float, out: Path, *words: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert elapsed < 10
    assert not out.exists()  # nothing was created before the check


def test_an_unreachable_endpoint(tmp_path) -> None:
    endpoint = f"http://127.0.0.1:{_free_port()}"  # nobody listens there
    done, elapsed, out = _run(tmp_path, {"url": "s3://b/p", "endpoint": endpoint})
    _refused(done, elapsed, out, "storage.url", "cannot be reached")


def test_an_endpoint_that_never_answers(tmp_path) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}"
        done, elapsed, out = _run(tmp_path, {"url": "s3://b/p", "endpoint": endpoint})
    _refused(done, elapsed, out, "storage.url", "cannot be reached")


def test_a_missing_bucket(tmp_path, s3_server: Server, bucket: str) -> None:
    storage = {"url": f"s3://{bucket}-missing/p", "endpoint": s3_server.endpoint}
    done, elapsed, out = _run(tmp_path, storage)
    _refused(done, elapsed, out, f"{bucket}-missing", "bucket does not exist")


@pytest.fixture(scope="module")
def guarded() -> tuple[str, str, dict[str, str]]:
    """moto with authentication on: a bucket, and a user whose keys may do nothing."""
    import boto3

    port = _free_port()
    env = os.environ | {"INITIAL_NO_AUTH_ACTION_COUNT": "3"}  # bucket, user, key
    cmd = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        session = boto3.Session(**{k.lower(): v for k, v in KEYS.items()}, region_name="us-east-1")
        session.client("s3", endpoint_url=endpoint).create_bucket(Bucket="guarded")
        iam = session.client("iam", endpoint_url=endpoint)
        iam.create_user(UserName="nobody")
        key = iam.create_access_key(UserName="nobody")["AccessKey"]
        keys = {
            "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
            "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
        }
        yield endpoint, "guarded", keys
    finally:
        server.terminate()
        server.wait(10)


def test_denied_access(tmp_path, guarded) -> None:
    endpoint, bucket, keys = guarded
    env = os.environ | keys | {"AWS_DEFAULT_REGION": "us-east-1"}
    done, elapsed, out = _run(tmp_path, {"url": f"s3://{bucket}/p", "endpoint": endpoint}, env)
    _refused(done, elapsed, out, "access denied")


def test_unknown_credentials(tmp_path, guarded) -> None:
    endpoint, bucket, _keys = guarded
    env = os.environ | {"AWS_ACCESS_KEY_ID": "AKIAUNKNOWN", "AWS_SECRET_ACCESS_KEY": "nope"}
    done, elapsed, out = _run(tmp_path, {"url": f"s3://{bucket}/p", "endpoint": endpoint}, env)
    _refused(done, elapsed, out, "credentials were refused")


def test_sigterm_during_an_upload_leaves_nothing(tmp_path, s3_server: Server, bucket: str) -> None:
    import boto3

    spec = {
        "version": 1,
        "workload": {"shape": {"time": 64, "y": 512, "x": 512}, "dtype": "int16"},  # 32 MiB
        "backend": "hdf5-object",
        "parameters": {"part_size": "5MiB", "request_concurrency": 1},
        "measure": {"repeats": 2},
    }
    with latency((s3_server.host, s3_server.port), 0.05) as proxy:  # 50 ms per request
        spec["storage"] = {"url": f"s3://{bucket}/p", "endpoint": proxy.endpoint}
        path = tmp_path / "spec.yaml"
        path.write_text(yaml.safe_dump(spec))
        env = os.environ | KEYS | {"AWS_DEFAULT_REGION": "us-east-1"}
        cmd = [sys.executable, "-m", "iotune", "run", str(path), "-o", str(tmp_path / "out")]
        run = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
        uploading = _wait_for_upload(proxy)
        run.send_signal(signal.SIGTERM)
        _out, err = run.communicate(timeout=60)
    assert uploading, "no upload was seen"
    assert run.returncode == 143, err
    assert objects(s3_server, bucket) == []
    client = boto3.client("s3", endpoint_url=s3_server.endpoint, region_name="us-east-1")
    assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def _wait_for_upload(proxy, timeout: float = 60) -> bool:
    """Until the proxy has forwarded a part of a multipart upload (a PUT with partNumber)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(m == "PUT" and "partNumber=2" in p for m, p in proxy.requests):
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        # obstore puts the request's duration in its message: a 403 there is no status
        ("Error performing HEAD http://h/b/x in 403.954µs - error sending request", "reached"),
        ("Error performing PUT http://h/b/x in 401.2ms - error sending request", "reached"),
        ("Server returned non-2xx status code: 403 Forbidden: <Code>AccessDenied</Code>", "denied"),
        ("status: 401, body: None", "denied"),
        ("Server returned non-2xx status code: 404 Not Found: ", "does not exist"),
        ("<Error><Code>NoSuchBucket</Code></Error>", "does not exist"),
        ("<Code>InvalidAccessKeyId</Code>", "credentials were refused"),
    ],
)
def test_each_cause_is_told_from_the_clients_message(message: str, cause: str) -> None:
    from iotune.objectstore.check import explain

    assert cause in explain(RuntimeError(message))
