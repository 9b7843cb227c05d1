"""The user's own analysis as a read pattern, through the command line (issue 32, item 1).

A module with a monthly mean over a box is swept on netCDF4, h5py and Zarr
with three chunk shapes and two ``dask_chunks``: every trial gives the reference's answer, reads
start cold, and ``recommend --objective read:climatology`` names a layout.
A function that raises on one layout fails that trial alone; a missing
module is refused in one line before anything is created.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

pytestmark = pytest.mark.slow

ANALYSIS = '''
import numpy as np


def monthly_mean(ds):
    """Mean over a box of each "month" (30 steps of the record dimension)."""
    box = ds["data"].isel(y=slice(2, 10), x=slice(4, 12))
    month = ("time", np.arange(box.sizes["time"]) // 30)
    return box.assign_coords(month=month).groupby("month").mean()


def fragile(ds):
    """Fails on one layout: time-step chunks."""
    encoding = ds["data"].encoding
    steps = encoding.get("preferred_chunks", {}).get("time")
    if steps == 1 or tuple(encoding.get("chunksizes") or ())[:1] == (1,):
        return len(ds["data"].dims) / 0
    return ds["data"].isel(time=0).sum()
'''

CHUNKS = [[60, 4, 4], [10, 16, 16], [1, 16, 16]]


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)


def write_spec(folder: Path, patterns: list, *, backends: list[str], **parameters) -> Path:
    spec = {
        "version": 1,
        "name": "analysis",
        "workload": {"shape": {"time": 60, "y": 16, "x": 16}, "dtype": "int16"},
        "backend": backends,
        "parameters": {"chunks": CHUNKS, **parameters},
        "read": {"patterns": patterns},
        "measure": {"repeats": 2},
    }
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("userpat")
    (folder / "myanalysis.py").write_text(ANALYSIS)
    climatology = {"name": "climatology", "call": "myanalysis:monthly_mean"}
    spec = write_spec(
        folder,
        ["full", climatology],
        backends=["netcdf4", "h5py", "zarr"],
        dask_chunks=["none", {"time": 20}],
    )
    proc = iotune("run", spec, "-o", folder / "out", "--no-progress", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    return folder / "out"


def test_every_layout_gives_the_reference_answer_from_a_cold_cache(swept: Path) -> None:
    ds = xr.open_dataset(swept / "results.nc")
    assert set(np.unique(ds["status"].values)) == {"ok"}, ds["error"].values
    assert "climatology" in list(ds["pattern"].values)
    clim = ds.sel(pattern="climatology")
    assert set(np.unique(clim["read_cache"].values)) == {"cold"}
    assert (clim["read_s"] > 0).all() and (clim["read_MiBps"] > 0).all()
    assert int(clim["read_ops"].min()) == 1  # one call per repeat
    assert clim["status"].size == 18  # 3 formats x 3 chunk shapes x 2 dask chunks
    # {time: 20} cuts the 60-step chunks: recorded with the trial, as xarray warns of it
    props = [json.loads(p) for p in ds["file_properties"].values.ravel()]
    assert {p.get("dask_chunks_split", "") for p in props} == {"", "time"}
    saved = sorted((swept / "references").glob("climatology-*.pkl"))
    assert len(saved) == 1
    assert json.loads(ds.attrs["provenance_user_patterns"])[0]["call"] == (
        "myanalysis:monthly_mean"
    )
    ds.close()


def test_recommend_names_a_layout_for_the_users_metric(swept: Path) -> None:
    proc = iotune("recommend", swept, "--objective", "read:climatology", cwd=swept)
    assert proc.returncode == 0, proc.stderr
    assert "read:climatology" in proc.stdout and "chunks" in proc.stdout


def test_show_lists_the_users_metric(swept: Path) -> None:
    proc = iotune("show", swept, cwd=swept)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.strip().startswith("read:climatology"))
    # what a person judges an analysis by, and ranks it by: the time of a call, in s, ms
    # or µs, with its interval; the MiB/s from storage beside it
    assert re.search(r"^read:climatology +\d[\d.]* (s|ms|µs) a call \[", line.strip()), line
    assert line.endswith(" MiB/s from storage"), line


def test_resume_finds_the_same_reference_and_spec(swept: Path) -> None:
    before = {p.name: p.read_bytes() for p in (swept / "references").iterdir()}
    proc = iotune("run", swept.parent / "spec.yaml", "-o", swept, "--resume", cwd=swept.parent)
    assert proc.returncode == 0, proc.stderr
    assert {p.name: p.read_bytes() for p in (swept / "references").iterdir()} == before


def test_a_function_that_raises_fails_that_trial_alone(tmp_path: Path) -> None:
    (tmp_path / "myanalysis.py").write_text(ANALYSIS)
    fragile = {"name": "fragile", "call": "myanalysis:fragile"}
    spec = write_spec(tmp_path, [fragile], backends=["netcdf4"])
    proc = iotune("run", spec, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # some trials failed; the sweep went on
    assert "1 failed, 2 ok" in proc.stdout
    ds = xr.open_dataset(tmp_path / "out" / "results.nc")
    status = dict(zip(ds["chunks"].values, ds["status"].values.ravel(), strict=True))
    errors = dict(zip(ds["chunks"].values, ds["error"].values.ravel(), strict=True))
    ds.close()
    assert status == {"60x4x4": "ok", "10x16x16": "ok", "1x16x16": "failed"}
    assert errors["1x16x16"] == "fragile: ZeroDivisionError: division by zero (myanalysis.py:17)"


def test_a_layout_that_changes_the_answer_fails_with_the_difference(tmp_path: Path) -> None:
    (tmp_path / "myanalysis.py").write_text(
        "def first(ds):\n"
        "    # differs from the reference wherever the data was stored in chunks of 1 step\n"
        "    steps = ds['data'].encoding.get('preferred_chunks', {}).get('time')\n"
        "    return ds['data'].isel(time=0).values + (steps == 1)\n"
    )
    spec = write_spec(tmp_path, [{"name": "first", "call": "myanalysis:first"}], backends=["zarr"])
    proc = iotune("run", spec, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 1 and "1 failed, 2 ok" in proc.stdout, proc.stderr
    ds = xr.open_dataset(tmp_path / "out" / "results.nc")
    errors = dict(zip(ds["chunks"].values, ds["error"].values.ravel(), strict=True))
    ds.close()
    assert errors["60x4x4"] == errors["10x16x16"] == ""
    assert (
        "read:first: result differs from the reference: largest difference 1" in (errors["1x16x16"])
    )


def test_a_missing_module_exits_2_in_one_line_and_creates_nothing(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path, [{"name": "climatology", "call": "nowhere:monthly_mean"}], backends=["netcdf4"]
    )
    proc = iotune("run", spec, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "read.patterns[0].call: 'nowhere:monthly_mean': no module 'nowhere'" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]


def test_a_function_that_fails_on_the_reference_stops_the_run_in_one_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "always.py").write_text("def fails(ds):\n    return ds['nothing']\n")
    spec = write_spec(tmp_path, [{"name": "x", "call": "always:fails"}], backends=["netcdf4"])
    proc = iotune("run", spec, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "failed on the workload's values in memory" in proc.stderr
    assert "(always.py:2)" in proc.stderr
    assert not (tmp_path / "out" / "references").exists()
    assert not (tmp_path / "out" / "results.nc").exists()
