"""The ``baselines`` list end to end: measured beside the grid, compared, resumed, refused."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import xarray as xr
import yaml

pytestmark = pytest.mark.slow

SPEC = {
    "version": 1,
    "name": "baselines",
    "workload": {"shape": {"time": 16, "y": 64, "x": 64}, "dtype": "int16"},
    "backend": "h5py",
    "parameters": {"chunks": [[16, 8, 8], [1, 64, 64]], "codec": "zlib", "level": 1},
    "read": {"patterns": ["full", "timeseries"], "timeseries": {"pixels": 4}},
    "measure": {"repeats": 2, "noise_probes": 0},
    "baselines": ["library", "dask-auto", "cloud"],
}


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    tmp = tmp_path_factory.mktemp("baselines")
    (tmp / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    proc = iotune("run", "spec.yaml", "-o", "out", "--no-progress", cwd=tmp)
    return tmp, proc


def test_the_baselines_are_measured_beside_the_grid(sweep) -> None:
    import h5py

    tmp, proc = sweep
    assert proc.returncode == 0, proc.stderr
    assert "speedup of each pattern's best over the baselines" in proc.stdout
    ds = xr.open_dataset(tmp / "out" / "results.nc")
    assert ds.attrs["swept"] == "chunks"
    assert ds["read_MiBps"].dims == ("chunks", "pattern", "repeat")  # the grid's dims as before
    assert list(ds["baseline"].values) == ["library", "dask-auto", "cloud"]
    assert list(ds["baseline_status"].values) == ["ok", "ok", "ok"]
    assert (ds["baseline_read_cache"].values == "cold").all()
    assert ds["baseline_read_MiBps"].notnull().all()
    with h5py.File("guess.h5", "w", driver="core", backing_store=False) as f:
        guess = f.create_dataset("v", shape=(16, 64, 64), dtype="int16", chunks=True).chunks
    chunks = dict(zip(ds["baseline"].values, ds["baseline_chunks"].values, strict=True))
    assert chunks == {
        "library": "x".join(map(str, guess)),
        "dask-auto": "16x64x64",  # dask's auto keeps a small array whole
        "cloud": "16x64x64",  # as does the cloud rule below 4 MiB
    }
    ids = ds["baseline_trial_id"].values
    assert ids[1] == ids[2]  # one layout, one trial
    assert set(ds["baseline_codec"].values) == {"zlib"}  # the grid's other parameters


def test_recommend_json_gives_speedups_with_intervals(sweep) -> None:
    tmp, _ = sweep
    proc = iotune("recommend", "out", "--format", "json", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["vs_baselines"]
    assert {(r["baseline"], r["pattern"]) for r in rows} == {
        (b, p)
        for b in ("library", "dask-auto", "cloud")
        for p in ("write", "full", "timeseries")  # the pick's cost on writes too
    }
    for row in rows:
        assert set(row) == {"baseline", "pattern", "speedup", "low", "high", "size_ratio"}
        assert all(math.isfinite(row[k]) and row[k] > 0 for k in set(row) - {"baseline", "pattern"})
        assert row["low"] <= row["speedup"] <= row["high"]
    text = iotune("recommend", "out", cwd=tmp)
    assert "speedup of the winner (chunks=" in text.stdout
    assert "library (chunks=" in text.stdout
    # no grid point at the defaults: said once, pointing at the baselines, not "no baseline"
    assert "no default point in the grid: the speedups are over the baselines below" in text.stdout
    assert "no baseline:" not in text.stdout


def test_show_and_plot_give_the_speedups(sweep) -> None:
    tmp, _ = sweep
    shown = iotune("show", "out", cwd=tmp)
    assert shown.returncode == 0, shown.stderr
    assert "dask-auto (chunks=16x64x64 codec=zlib)" in shown.stdout
    # the pick's whole cost against what you get anyway: the library's default layout
    pick = shown.stdout.split("(throughput in MiB/s")[1].split("best configuration")[0]
    against = next(x for x in pick.splitlines() if x.startswith("  against "))
    assert against.startswith("  against library (chunks=") and "95% intervals: write " in against
    assert all(f" {metric} " in pick for metric in ("read:full", "read:timeseries", "size"))
    plotted = iotune("plot", "out", "-o", "figures", cwd=tmp)
    assert plotted.returncode == 0, plotted.stderr
    assert (tmp / "figures" / "vs-baselines.png").stat().st_size > 0


def test_resume_does_not_measure_the_baselines_again(sweep) -> None:
    tmp, _ = sweep
    journal = (tmp / "out" / "journal.jsonl").read_bytes()
    before = xr.open_dataset(tmp / "out" / "results.nc").load()
    ids = set(before["baseline_trial_id"].values)
    assert all(i.encode() in journal for i in ids)  # journaled like the grid's trials
    proc = iotune("run", "spec.yaml", "-o", "out", "--resume", "--no-progress", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    assert (tmp / "out" / "journal.jsonl").read_bytes() == journal
    after = xr.open_dataset(tmp / "out" / "results.nc")
    xr.testing.assert_equal(after["baseline_read_MiBps"], before["baseline_read_MiBps"])


def test_an_unknown_baseline_exits_2_in_one_line(tmp_path: Path) -> None:
    spec = {**SPEC, "baselines": ["library", "default"]}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    proc = iotune("run", "spec.yaml", "-o", "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == "" and proc.stderr.count("\n") == 1
    assert "baselines[1]" in proc.stderr and "'default'" in proc.stderr
    assert "allowed: library, dask-auto, balanced, cloud, source" in proc.stderr
    assert not (tmp_path / "out").exists()
