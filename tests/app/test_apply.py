"""``iotune apply``: a small sweep's recommendation applied to a CF file, killed and resumed."""

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
from iotune.cli.main import main
from tests.convert.conftest import make_cf_source
from tests.convert.test_convert import assert_same_data

SWEEP = {
    "version": 1,
    "name": "apply",
    # large enough that a time series through map chunks reads 16 times the bytes
    "workload": {"shape": {"time": 64, "y": 128, "x": 128}, "dtype": "int16"},
    "parameters": {"chunks": [[64, 16, 16], [1, 128, 128]], "codec": ["none", "zlib"]},
    "read": {"patterns": ["spatial", "timeseries"], "timeseries": {"pixels": 4}},
    "measure": {"repeats": 2},
}
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["netcdf4", "zarr"])
def sweep(request, tmp_path_factory) -> tuple[str, Path]:
    """A real sweep of map and time-series chunks in one backend: (backend, results)."""
    where = tmp_path_factory.mktemp(f"sweep-{request.param}")
    spec = where / "spec.yaml"
    spec.write_text(yaml.safe_dump({**SWEEP, "backend": request.param}, sort_keys=False))
    api.run(spec, out=where / "results", progress=False)
    return request.param, where / "results"


def test_the_recommendation_is_written(sweep, tmp_path: Path) -> None:
    backend, results = sweep
    source = make_cf_source(tmp_path / "source.nc")
    target = tmp_path / ("out.zarr" if backend == "zarr" else "out.nc")
    rec = api.recommend(results, objective="read:timeseries")
    report = api.apply(results, source, target, objective="read:timeseries", verify="full")
    assert_same_data(source, target)
    # what was written is what recommend picked (which one wins is the sweep's to
    # measure: on a loaded machine noise may pick the other codec); chunks read back
    chunks, codec = rec.winner.settings["chunks"], rec.winner.settings["codec"]
    steps = [min(int(n), 40) for n in chunks.split("x")]  # 40 steps in the source
    assert report.variables[0]["chunks_after"] == "x".join(map(str, steps))
    assert report.settings.startswith(f"backend={backend} chunks={chunks} codec={codec}")


def run_cli(*args: str, delay: float = 0.0) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IOTUNE_APPLY_REGION_DELAY": str(delay)}
    command = [sys.executable, "-W", "ignore", "-m", "iotune", "apply", *args]
    return subprocess.Popen(
        command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def written(journal: Path) -> list[int]:
    if not journal.exists():
        return []
    lines = journal.read_text().splitlines()[1:]
    entries = [json.loads(line) for line in lines if line.endswith("}")]
    return [e["written"] for e in entries if "written" in e]  # the last: "finished"


@pytest.mark.parametrize("suffix", [".nc", ".zarr", ".h5"])
def test_kill_half_way_then_resume(tmp_path: Path, suffix: str) -> None:
    source = make_cf_source(tmp_path / "source.nc", time=64)
    target, reference = tmp_path / f"out{suffix}", tmp_path / f"reference{suffix}"
    options = ["--settings", "chunks=4x8x8 codec=zlib level=2", "--max-mem", "60KB"]
    done = run_cli(*options, str(source), "-o", str(reference))
    assert done.wait(60) == 0, done.stderr.read()  # type: ignore[union-attr]
    journal = target.with_name(target.name + ".iotune-journal")
    killed = run_cli(*options, str(source), "-o", str(target), delay=0.15)
    deadline = time.monotonic() + 60
    while len(written(journal)) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    before = written(journal)
    total = len(written(reference.with_name(reference.name + ".iotune-journal")))
    assert 4 <= len(before) < total  # half-way
    assert not target.exists() and target.with_name(target.name + ".iotune-partial").exists()
    again = run_cli(*options, "--resume", "--verify", "full", str(source), "-o", str(target))
    assert again.wait(60) == 0, again.stderr.read()  # type: ignore[union-attr]
    after = written(journal)
    assert sorted(after) == list(range(total))  # every region once: none written twice
    assert after[: len(before)] == before
    assert_same_data(source, target)
    assert "already written" in again.stdout.read()  # type: ignore[union-attr]


def listing(where: Path) -> list[str]:
    return sorted(p.name for p in where.iterdir())


def test_bad_inputs_exit_2_with_one_line_and_nothing_created(
    sweep, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, results = sweep
    source = make_cf_source(tmp_path / "source.nc")
    other = make_cf_source(tmp_path / "other.nc")
    import netCDF4

    with netCDF4.Dataset(other, "a") as nc:  # dimensions renamed: not the workload's
        nc.renameDimension("y", "lat")
    (tmp_path / "junk.nc").write_text("not netCDF")
    (tmp_path / "taken.nc").write_text("mine")
    cases = [
        [str(results), str(tmp_path / "junk.nc"), "-o", str(tmp_path / "a.nc")],
        [str(results), str(other), "-o", str(tmp_path / "b.nc")],
        [str(results), str(source), "-o", str(tmp_path / "taken.nc")],
        ["--settings", "chunks=4x4x4 quantize=bitround", str(source), "-o", str(tmp_path / "c.nc")],
        [
            "--settings",
            "chunks=4x4x4 codec=zstd shuffle=byte",
            str(source),
            "-o",
            str(tmp_path / "d.nc"),
        ],
        [str(results), str(source), "-o", str(tmp_path / "e.nc"), "--max-mem", "1KB"],
    ]
    before = listing(tmp_path)
    for args in cases:
        assert main(["apply", *args]) == 2, args
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert listing(tmp_path) == before
    assert (tmp_path / "taken.nc").read_text() == "mine"


def test_sigterm_stops_and_leaves_the_partial_target_resumable(tmp_path: Path) -> None:
    source = make_cf_source(tmp_path / "source.nc", time=64)
    target = tmp_path / "out.nc"
    options = ["--settings", "chunks=4x8x8", "--max-mem", "60KB", str(source), "-o", str(target)]
    running = run_cli(*options, delay=0.3)
    journal = target.with_name(target.name + ".iotune-journal")
    deadline = time.monotonic() + 60
    while len(written(journal)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    running.send_signal(signal.SIGTERM)
    assert running.wait(10) == 143
    assert "rerun with --resume" in running.stderr.read()  # type: ignore[union-attr]
    assert not target.exists()
    again = run_cli(*options, "--resume")
    assert again.wait(60) == 0, again.stderr.read()  # type: ignore[union-attr]
    assert_same_data(source, target)
