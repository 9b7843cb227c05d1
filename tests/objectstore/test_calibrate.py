"""``iotune calibrate --storage`` against a real S3 server: figures, cache, cleanup, errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from iotune.app import api
from iotune.runner import calibrate as cal
from iotune.runner.calibrate_store import storage_from_options
from tests.objectstore.conftest import KEYS, Server, _free_port
from tests.objectstore.proxy import latency
from tests.objectstore.test_run import objects

#: small enough for a few seconds against moto: 4 parts of S3's smallest size
SMALL = {"size": "20MiB", "part_size": "5MiB", "request_concurrency": "1,2,4", "small_gets": 10}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "iotune" / "calibration.json"


def _uploads(server: Server, bucket: str) -> list:
    import boto3

    client = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1")
    return client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])


def test_calibrate_measures_each_level_caches_and_leaves_nothing(
    s3_server: Server, bucket: str, cache: Path
) -> None:
    url = f"s3://{bucket}/calib"
    limit = api.calibrate_storage(url, endpoint=s3_server.endpoint, **SMALL)
    assert [level["in_flight"] for level in limit["levels"]] == [1, 2, 4]
    for level in limit["levels"]:
        assert level["put_MiBps"] > 0 and level["get_MiBps"] > 0
    assert limit["write_MiBps"] == max(lv["put_MiBps"] for lv in limit["levels"])
    assert limit["read_MiBps"] == max(lv["get_MiBps"] for lv in limit["levels"])
    small = limit["small_get"]
    assert small["count"] == 10 and 0 < small["ttfb_ms_median"] <= small["ttfb_ms_p99"]
    assert small["ttfb_ms_median"] <= small["total_ms_median"]
    assert limit["size_bytes"] == 20 * 2**20 and limit["part_bytes"] == 5 * 2**20
    assert limit["kind"] == "object store" and limit["retries"] == 0
    # the area (data, small object, owner mark) is gone, and no upload was left open
    assert objects(s3_server, bucket) == []
    assert _uploads(s3_server, bucket) == []
    # cached by scheme, endpoint and bucket; found for a sweep's storage, not a file system's
    text = cache.read_text()
    assert KEYS["AWS_SECRET_ACCESS_KEY"] not in text and KEYS["AWS_ACCESS_KEY_ID"] not in text
    key = f"store:s3:{s3_server.endpoint}:{bucket}"
    assert json.loads(text)["entries"][key]["write_MiBps"] == limit["write_MiBps"]
    other_prefix = storage_from_options(f"s3://{bucket}/elsewhere", endpoint=s3_server.endpoint)
    assert cal.load_limit("/", storage=other_prefix) == limit
    assert cal.load_limit("/") is None
    assert "PUT MiB/s" in api.store_limit_text(limit)


def test_the_proxy_delay_shows_in_small_get_latency(s3_server: Server, bucket: str) -> None:
    with latency((s3_server.host, s3_server.port), 0.030) as proxy:
        limit = api.calibrate_storage(
            f"s3://{bucket}/slow",
            endpoint=proxy.endpoint,
            size="5MiB",
            part_size="5MiB",
            request_concurrency=[1],
            small_gets=8,
            save=False,
        )
    small = limit["small_get"]
    assert small["ttfb_ms_median"] >= 30.0, small
    assert small["ttfb_ms_median"] < 200.0, small  # one delay per request, not several
    assert objects(s3_server, bucket) == []


def test_a_sweep_on_the_store_carries_its_limit(
    s3_server: Server, bucket: str, cache: Path, tmp_path: Path
) -> None:
    from iotune.plot import fraction_of_limit

    limit = api.calibrate_storage(f"s3://{bucket}/calib", endpoint=s3_server.endpoint, **SMALL)
    spec = {
        "version": 1,
        "name": "on-store",
        "workload": {"shape": {"time": 4, "y": 32, "x": 32}, "dtype": "int16"},
        "backend": "object",
        "parameters": {"request_concurrency": [1, 2]},
        "read": {"patterns": ["full"]},
        "measure": {"repeats": 1, "noise_probes": 0},
        "storage": {"url": f"s3://{bucket}/runs", "endpoint": s3_server.endpoint},
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    ds = api.run(path, out=tmp_path / "out", scratch=scratch, progress=False)
    assert ds.attrs["device_limit_kind"] == "object store"
    assert ds.attrs["device_limit_write_MiBps"] == limit["write_MiBps"]
    assert ds.attrs["device_limit_read_MiBps"] == limit["read_MiBps"]
    assert ds.attrs["device_limit_key"] == limit["key"]
    fraction = ds["fraction_of_limit"]
    assert "store's limit" in fraction.attrs["long_name"]
    expected = ds["write_MiBps"] / limit["write_MiBps"]
    assert bool((fraction.sel(metric="write") == expected).all())
    fig = fraction_of_limit(ds)
    (ax,) = fig.axes
    assert ax.get_ylabel() == "throughput / store's limit (1 = calibrated bandwidth)"
    assert any("iotune calibrate --storage" in line.get_label() for line in ax.get_lines())
    assert "fraction of the store's limit" in fig.get_suptitle()
    assert "PUT" in fig.get_suptitle() and "GET" in fig.get_suptitle()
    assert objects(s3_server, bucket) == []


def test_a_sweep_on_an_uncalibrated_store_has_no_limit(
    s3_server: Server, bucket: str, cache: Path, tmp_path: Path
) -> None:
    # a file system's calibration says nothing of a store: it must not be attached
    cal.store(
        {"key": cal.device_key(tmp_path), "write_MiBps": 1.0, "read_MiBps": 1.0, "measured": ""}
    )
    storage = storage_from_options(f"s3://{bucket}/runs", endpoint=s3_server.endpoint)
    assert cal.load_limit(tmp_path, storage=storage) is None
    assert cal.load_limit(tmp_path) is not None


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = os.environ | KEYS | {"AWS_DEFAULT_REGION": "us-east-1"} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "iotune", *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_cli_calibrate_storage_as_json(s3_server: Server, bucket: str, tmp_path: Path) -> None:
    xdg = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    args = ["calibrate", "--storage", f"s3://{bucket}/c", "--endpoint", s3_server.endpoint]
    args += ["--size", "10MiB", "--part-size", "5MiB", "--request-concurrency", "1,2"]
    done = _cli(*args, "--format", "json", env=xdg)
    assert done.returncode == 0, done.stderr
    limit = json.loads(done.stdout)
    assert [lv["in_flight"] for lv in limit["levels"]] == [1, 2] and limit["read_MiBps"] > 0
    assert (tmp_path / "xdg" / "iotune" / "calibration.json").is_file()
    assert objects(s3_server, bucket) == []


@pytest.mark.parametrize(
    ("where", "words"),
    [
        ("endpoint", ("the endpoint cannot be reached",)),
        ("bucket", ("the bucket does not exist",)),
    ],
)
def test_cli_a_store_it_cannot_use_is_one_line_exit_2(
    s3_server: Server, bucket: str, tmp_path: Path, where: str, words: tuple[str, ...]
) -> None:
    endpoint = f"http://127.0.0.1:{_free_port()}" if where == "endpoint" else s3_server.endpoint
    name = "iotune-no-such-bucket" if where == "bucket" else bucket
    started = time.monotonic()
    done = _cli(
        "calibrate", "--storage", f"s3://{name}/c", "--endpoint", endpoint,
        env={"XDG_CACHE_HOME": str(tmp_path / "xdg")},
    )  # fmt: skip
    assert time.monotonic() - started < 10
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iotune: error: "), done.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert not (tmp_path / "xdg").exists()  # nothing cached


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--storage", "s3://b/p", "--transfer-size", "1MiB"],
            "--transfer-size: a file system's option",
        ),
        (["--part-size", "8MiB"], "--part-size: only with --storage URL"),
        (["--storage", "ftp://b/p"], "--storage: scheme 'ftp' is not allowed"),
        (["--storage", "s3://b/p", "--part-size", "1MiB"], "--part-size: 1MiB; allowed: at least"),
        (["--storage", "s3://b/p", "--request-concurrency", "1,x"], "--request-concurrency:"),
        (
            ["--storage", "s3://b/p", "--size", "8MiB", "--request-concurrency", "4"],
            "--request-concurrency: 4 in flight needs at least 4 parts",
        ),
    ],
)
def test_cli_bad_options_are_one_line(argv: list[str], message: str, capsys) -> None:
    from iotune.cli.main import main

    assert main(["calibrate", *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_calibration_removes_its_objects(
    s3_server: Server, bucket: str, tmp_path: Path, sig: signal.Signals
) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=s3_server.endpoint, region_name="us-east-1")
    env = os.environ | KEYS | {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    # 0.2 s per request: the calibration takes 10 s or more however fast the machine is,
    # so the signal lands while it measures, not after it has finished
    with latency((s3_server.host, s3_server.port), 0.2) as proxy:
        args = ["calibrate", "--storage", f"s3://{bucket}/c", "--endpoint", proxy.endpoint]
        args += ["--size", "20MiB", "--part-size", "5MiB", "--request-concurrency", "1"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "iotune", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            deadline = time.monotonic() + 30
            while not any(  # the area is marked: measuring (the pre-flight probe is not)
                o["Key"].endswith(".iotune-owner")
                for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])
            ):
                assert proc.poll() is None and time.monotonic() < deadline, proc.returncode
                time.sleep(0.05)
            time.sleep(0.5)  # into the measurement, well before its end
            assert proc.poll() is None, "the calibration ended before the signal could land"
            proc.send_signal(sig)
            _out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == (130 if sig == signal.SIGINT else 128 + sig), (proc.returncode, err)
    assert "nothing was measured or cached" in err and "Traceback" not in err, err
    assert objects(s3_server, bucket) == []
    assert _uploads(s3_server, bucket) == []
    assert not (tmp_path / "xdg").exists()
