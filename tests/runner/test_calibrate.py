"""Device calibration: a real (small) measurement, its cache, and fraction_of_limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iotune.core.errors import UsageError
from iotune.runner import calibrate as cal


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "iotune" / "calibration.json"


def test_calibrate_measures_and_caches(tmp_path: Path, cache: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    limit = cal.calibrate(scratch, size="4MiB", block="1MiB", repeats=2)
    assert limit["write_MiBps"] > 0 and limit["read_MiBps"] > 0
    assert len(limit["write_samples"]) == len(limit["read_samples"]) == 2
    assert min(limit["write_samples"]) <= limit["write_MiBps"] <= max(limit["write_samples"])
    assert limit["size_bytes"] == 4 * 2**20 and limit["block_bytes"] == 2**20
    assert limit["write_method"] in ("O_DIRECT + fsync", "buffered + fsync")
    assert list(scratch.iterdir()) == []  # the measurement file is gone
    stored = json.loads(cache.read_text())["entries"]
    assert stored[limit["key"]]["write_MiBps"] == limit["write_MiBps"]
    assert cal.load_limit(scratch) == limit
    assert cal.load_limit(scratch / "not" / "yet" / "made") == limit  # same file system


def test_buffered_fallback_says_so_and_reads_cold(tmp_path: Path, cache: Path) -> None:
    limit = cal.calibrate(tmp_path, size="2MiB", block="1MiB", repeats=1, direct=False)
    assert limit["write_method"] == "buffered + fsync"
    assert limit["read_method"] == "buffered, page cache evicted"
    if limit["fs_type"] not in ("tmpfs", "ramfs"):
        assert limit["cold"] and max(limit["read_residency"]) <= 0.05
    assert "buffered + fsync" in cal.format_limit(limit)


def test_no_cache_no_limit(tmp_path: Path, cache: Path) -> None:
    assert cal.load_limit(tmp_path) is None
    cache.parent.mkdir(parents=True)
    cache.write_text("not json")
    assert cal.load_limit(tmp_path) is None


def test_local_keys_name_the_host_network_keys_do_not(tmp_path: Path) -> None:
    import socket

    key = cal.device_key(tmp_path)
    assert key.startswith(socket.gethostname() + ":")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"size": "lots"}, "--size: .*'lots'"),
        ({"size": "4KiB"}, "--size: 4KiB is too small; allowed: at least 1MiB"),
        ({"block": "1000"}, "--transfer-size: 1000 bytes; allowed: a multiple of 4KiB"),
        ({"repeats": 0}, "--repeats: 0; allowed: at least 1"),
        ({"size": "1PB"}, "--size: .*'1PB'"),
    ],
)
def test_bad_arguments(tmp_path: Path, cache: Path, kwargs: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        cal.calibrate(tmp_path, **kwargs)
    with pytest.raises(UsageError, match=r"--scratch: .* is not an existing directory"):
        cal.calibrate(tmp_path / "missing")


def test_cli_calibrate(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    run = [sys.executable, "-m", "iotune", "calibrate", "--scratch", str(tmp_path)]
    done = subprocess.run(
        [*run, "--size", "2MiB", "--transfer-size", "1MiB", "--repeats", "1"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "write" in done.stdout and "cold read" in done.stdout and "MiB/s" in done.stdout
    assert (tmp_path / "xdg" / "iotune" / "calibration.json").exists()
    bad = subprocess.run([*run, "--size", "huge"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2
    assert bad.stderr.startswith("iotune: error: --size:") and "Traceback" not in bad.stderr
