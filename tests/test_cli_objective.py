"""What a read-only sweep of the user's code says and leaves, through the command line (issue 40).

A sweep that reads only with the user's function is ranked by that function, not by
the write every trial also measures, and ``run``, ``recommend`` and ``apply`` each say
which objective they used and why.  A sweep whose function fails on the reference
run is refused before any trial and leaves the output directory as it found it, so
the corrected rerun needs no ``--overwrite``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

pytestmark = pytest.mark.slow

ANALYSIS = '''
def boxmonthly(ds):
    """A box's mean over the first steps."""
    return ds["data"].isel(time=slice(0, 4), y=slice(0, 4)).mean()
'''
BROKEN = """
def boxmonthly(ds):
    return ds["nope"].mean()
"""
#: the line each command prints for the default objective
SAID = "objective: read:boxmonthly (your code's first read pattern; pass --objective to choose)"


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


def write_spec(folder: Path) -> Path:
    spec = {
        "version": 1,
        "name": "readonly",
        "workload": {"shape": {"time": 8, "y": 8, "x": 8}, "dtype": "int16"},
        "backend": "netcdf4",
        # contiguous: the file a write objective would pick is not the one the reads want
        "parameters": {"chunks": [[8, 8, 8], [1, 8, 8]]},
        "read": {"patterns": [{"name": "boxmonthly", "call": "analysis:boxmonthly"}]},
        "measure": {"repeats": 1},
    }
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def refused_then_fixed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The sweep run with a broken function into OUT (absent), then fixed and run again."""
    folder = tmp_path_factory.mktemp("objective")
    spec = write_spec(folder)
    (folder / "analysis.py").write_text(BROKEN)
    refused = iotune("run", spec, "-o", "out", "--no-progress", cwd=folder)
    left = (folder / "out").exists()
    (folder / "analysis.py").write_text(ANALYSIS)
    ran = iotune("run", spec, "-o", "out", "--no-progress", cwd=folder)
    return {"folder": folder, "refused": refused, "left": left, "ran": ran}


def test_a_refused_run_leaves_no_directory(refused_then_fixed: dict) -> None:
    refused = refused_then_fixed["refused"]
    assert refused.returncode == 2, refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "read.patterns boxmonthly" in lines[0], refused.stderr
    assert "Traceback" not in refused.stderr
    assert not refused_then_fixed["left"], "the refused run left OUT behind"


def test_the_corrected_rerun_needs_no_overwrite(refused_then_fixed: dict) -> None:
    ran = refused_then_fixed["ran"]
    assert ran.returncode == 0, ran.stderr
    assert (refused_then_fixed["folder"] / "out" / "results.nc").is_file()


def test_a_refused_run_leaves_an_existing_directory_as_it_was(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    (tmp_path / "analysis.py").write_text(BROKEN)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    refused = iotune("run", spec, "-o", out, "--no-progress", cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert (out / "notes.txt").read_text() == "mine"


def test_run_says_the_objective_of_a_read_only_sweep(refused_then_fixed: dict) -> None:
    printed = refused_then_fixed["ran"].stdout.splitlines()
    assert not any(x.startswith("recommended for write") for x in printed), printed
    assert any(x.startswith("recommended for read:boxmonthly: ") for x in printed), printed
    assert f"  {SAID}" in printed


def test_recommend_ranks_by_the_users_function_and_says_so(refused_then_fixed: dict) -> None:
    folder = refused_then_fixed["folder"]
    text = iotune("recommend", "out", cwd=folder)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    # a noisy run says first that its repeats cannot decide (issue 44), then the objective
    undecided = lines[0].startswith("cannot decide at this noise: ")
    assert lines[1 if undecided else 0] == SAID, lines
    as_json = iotune("recommend", "out", "--format", "json", cwd=folder)
    found = json.loads(as_json.stdout)
    assert found["weights"] == {"read:boxmonthly": 1.0}
    assert found["objective_default"] == "your code's first read pattern"


def test_apply_writes_what_the_reads_want_and_says_why(refused_then_fixed: dict) -> None:
    folder = refused_then_fixed["folder"]
    values = np.arange(512, dtype="int16").reshape(8, 8, 8)
    xr.Dataset({"data": (("time", "y", "x"), values)}).to_netcdf(folder / "source.nc")
    head = "recommended for read:boxmonthly: "
    said = refused_then_fixed["ran"].stdout.splitlines()
    winner = next(x for x in said if x.startswith(head)).removeprefix(head)
    done = iotune(
        "apply", "out", "source.nc", "-o", "target.nc", "--no-progress", "--no-measure", cwd=folder
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2] == f"  {SAID}"
    assert f"netcdf4 {winner} codec" in lines[0]  # run's pick for the reads, not the write's
    shown = " ".join(iotune("apply", "--help", cwd=folder).stdout.split())
    assert "default: the sweep's read pattern of your own code" in shown
