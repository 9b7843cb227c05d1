"""``iotune clean --storage``: areas of dead runs of this host go, every other one stays."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from iotune.cli import actions
from tests.objectstore.conftest import Server
from tests.objectstore.test_run import iotune, objects


def _put(server: Server, bucket: str, key: str, body: bytes) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1")
    client.put_object(Bucket=bucket, Key=key, Body=body)


def _dead_pid() -> int:
    """The pid of a process of this host that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def areas(s3_server: Server, bucket: str) -> dict[str, str]:
    """One area per owner state under ``runs/``, each with a data object, and a bystander."""
    host = socket.gethostname()
    owners = {
        "dead": f"{host} {_dead_pid()}\n",
        "alive": f"{host} {os.getpid()}\n",
        "elsewhere": "another-node 4242\n",
        "unmarked": None,
    }
    for state, owner in owners.items():
        area = f"runs/iotune-scratch-{state}"
        _put(s3_server, bucket, f"{area}/trial-1/r0.bin", b"x" * 1000)
        if owner is not None:
            _put(s3_server, bucket, f"{area}/.iotune-owner", owner.encode())
    _put(s3_server, bucket, "runs/results/keep.bin", b"not iotune's")
    return {state: f"s3://{bucket}/runs/iotune-scratch-{state}/" for state in owners}


def test_cli_clean_storage_removes_only_dead_runs(
    s3_server: Server, bucket: str, areas: dict[str, str]
) -> None:
    done = iotune("clean", "--storage", f"s3://{bucket}/runs", "--endpoint", s3_server.endpoint)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 4, done.stdout
    by_area = {state: next(x for x in lines if url in x) for state, url in areas.items()}
    assert by_area["dead"].startswith("removed objects left by an earlier run (pid ")
    assert "2 objects" in by_area["dead"]
    assert by_area["alive"].startswith(f"kept objects of a running iotune (pid {os.getpid()}")
    assert by_area["elsewhere"].startswith("kept objects of pid 4242 on host another-node")
    assert "cannot be checked from here" in by_area["elsewhere"]
    assert by_area["unmarked"].endswith(
        "(1 object, 1000B): no owner mark, so not known to be iotune's"
    )
    left = objects(s3_server, bucket)
    assert not [k for k in left if k.startswith("runs/iotune-scratch-dead/")]
    for state in ("alive", "elsewhere", "unmarked"):
        assert f"runs/iotune-scratch-{state}/trial-1/r0.bin" in left
    assert "runs/results/keep.bin" in left
    again = iotune("clean", "--storage", f"s3://{bucket}/runs", "--endpoint", s3_server.endpoint)
    assert again.returncode == 0 and "removed" not in again.stdout
    assert again.stdout.strip().endswith("nothing to clean")


def test_api_clean_storage_with_a_directory(
    s3_server: Server, bucket: str, areas: dict[str, str], tmp_path
) -> None:
    lines = actions.clean(tmp_path, storage=f"s3://{bucket}/runs", endpoint=s3_server.endpoint)
    assert sum(line.startswith("removed") for line in lines) == 1
    assert len(lines) == 4


def test_clean_an_unreachable_store_is_one_line(tmp_path) -> None:
    from tests.objectstore.conftest import _free_port

    done = iotune(
        "clean", "--storage", "s3://iotune-x/runs", "--endpoint",
        f"http://127.0.0.1:{_free_port()}", timeout=30,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "the endpoint cannot be reached" in lines[0], done.stderr


def test_clean_needs_something_to_clean(capsys) -> None:
    from iotune.cli.main import main

    assert main(["clean"]) == 2
    assert "give OUT, --scratch DIR or --storage URL" in capsys.readouterr().err
    assert main(["clean", "--endpoint", "http://127.0.0.1:9"]) == 2
    assert "--endpoint: only with --storage URL" in capsys.readouterr().err
