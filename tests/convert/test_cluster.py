"""A collection of files converted to one Zarr target by the workers of a LocalCluster."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]  # (distributed depends on it)
import zarr

from iotune.app.apply import apply
from iotune.convert.cluster import DEFAULT_WORKERS
from iotune.convert.report import ApplyReport
from tests.convert.conftest import make_cf_source
from tests.convert.test_convert import assert_same_data
from tests.convert.test_sources import split

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = "chunks=4x8x8 codec=zlib level=2 shuffle=byte backend=zarr"


def collection(tmp_path: Path, *, time: int = 40) -> tuple[Path, str]:
    """The whole file, and a glob of its time steps in four files."""
    whole = make_cf_source(tmp_path / "whole.nc", time=time)
    data = tmp_path / "archive"
    data.mkdir()
    step = time // 4
    split(whole, data, [(i, min(i + step, time)) for i in range(0, time, step)])
    return whole, str(data / "*.nc")


def stored(target: Path) -> dict[str, tuple[object, ...]]:
    """Each array's chunks and codecs as the store says."""
    group = zarr.open_group(target, mode="r")
    return {
        name: (array.chunks, json.dumps(array.metadata.to_dict()["codecs"], sort_keys=True))
        for name, array in group.arrays()
    }


def test_a_collection_on_two_workers_equals_the_serial_conversion(tmp_path: Path) -> None:
    whole, files = collection(tmp_path)
    # 30 KB per worker: blocks of two dimensions, as a serial run plans them
    options: dict[str, Any] = {
        "settings": SETTINGS,
        "max_mem": "30KB",
        "verify": "full",
        "progress": False,
    }
    serial = apply(None, files, tmp_path / "serial.zarr", measure=False, **options)
    target = tmp_path / "dask.zarr"
    report = apply(None, files, target, executor="dask", measure=False, **options)
    assert isinstance(report, ApplyReport) and isinstance(serial, ApplyReport)
    assert "local dask cluster" in report.engine
    assert f"--max-mem 29.3KiB per worker, {DEFAULT_WORKERS} workers" in report.engine
    assert report.regions == serial.regions == report.regions_verified > 10
    assert_same_data(whole, target)
    assert stored(target) == stored(tmp_path / "serial.zarr")
    chunks, codecs = stored(target)["tas"]
    assert chunks == (4, 8, 8) and "zlib" in str(codecs)
    journal = target.with_name(target.name + ".iotune-journal")
    lines = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert sorted(e["written"] for e in lines if "written" in e) == list(range(report.regions))


def run_cli(*args: str, delay: float = 0.0) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IOTUNE_APPLY_REGION_DELAY": str(delay)}
    command = [sys.executable, "-W", "ignore", "-m", "iotune", "apply", *args]
    return subprocess.Popen(
        command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def written(journal: Path) -> list[int]:
    if not journal.exists():
        return []
    entries = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    return [e["written"] for e in entries if "written" in e]


def test_kill_the_dask_conversion_half_way_then_resume(tmp_path: Path) -> None:
    whole, files = collection(tmp_path, time=64)
    target = tmp_path / "out.zarr"
    partial, journal = (
        target.with_name(target.name + s) for s in (".iotune-partial", ".iotune-journal")
    )
    # regions of 4 rows (one chunk row; two copies fit 60 KB): 16 regions, one chunk each
    options = ["--settings", "chunks=4x32x24 codec=zlib level=1 backend=zarr", "--max-mem", "60KB"]
    options += ["--executor", "dask", "--no-progress", "--no-measure", files, "-o", str(target)]
    killed = run_cli(*options, delay=0.3)
    deadline = time.monotonic() + 60
    while len(written(journal)) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = psutil.Process(killed.pid).children(recursive=True)
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    _, alive = psutil.wait_procs(workers, timeout=20)
    assert not alive  # the workers go with the process that started them
    before = written(journal)
    assert 4 <= len(before) < 16
    chunks = {i: partial / "tas" / "c" / str(i) / "0" / "0" for i in before}
    stamps = {i: path.stat().st_mtime_ns for i, path in chunks.items()}
    again = run_cli(*options, "--resume", "--verify", "full")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    after = written(journal)
    assert sorted(after) == list(range(16))  # every region once: none written twice
    assert after[: len(before)] == before
    assert {
        i: (target / path.relative_to(partial)).stat().st_mtime_ns for i, path in chunks.items()
    } == stamps
    assert_same_data(whole, target)
    assert "already written" in out and "per worker" in out
