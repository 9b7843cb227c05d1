"""A user's pattern inside a trial: timed from a cold cache, bytes counted, answer checked."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iotune.measuring import reference
from iotune.model.records import TrialTask
from iotune.model.spec import MeasureSpec
from iotune.runner.plan import make_plan
from iotune.runner.trial import run_trial
from iotune.specfile.parse import load_spec_text

SPEC = """
version: 1
workload: {shape: {time: 24, y: 64, x: 64}}
parameters: {chunks: [[8, 32, 32]], concurrency: CONCURRENCY}
read: {patterns: [full, {name: box, call: "box_for_test:box"}]}
"""
CODE = "def box(ds):\n    return ds['data'].isel(y=slice(0, 32)).mean(('time', 'x'))\n"


def task(tmp_path: Path, *, concurrency: int = 1, cache: str = "cold") -> TrialTask:
    folder = tmp_path / "spec"
    folder.mkdir(exist_ok=True)
    (folder / "box_for_test.py").write_text(CODE)
    text = SPEC.replace("CONCURRENCY", str(concurrency))
    sweep = load_spec_text(text, source=str(folder / "spec.yaml"))
    (trial,) = make_plan(sweep).trials
    (user,) = sweep.read.user
    ref = reference.ensure(tmp_path / "out", sweep.workload, user)
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    measure = MeasureSpec(repeats=2, cache=cache)
    return TrialTask(
        trial, sweep.workload, sweep.read, measure, str(scratch), references=(("box", str(ref)),)
    )


def test_a_cold_call_counts_the_bytes_read_from_storage(tmp_path: Path) -> None:
    result = run_trial(task(tmp_path))
    assert result.status == "ok", result.error
    runs = result.reads["box"]
    assert len(runs) == 2
    for run in runs:
        assert run["cache"] == "cold" and run["resident_fraction"] <= 0.05
        assert run["ops"] == 1 and run["s"] > 0
        # half the rows of every step: at least the chunks holding them came from storage
        assert run["storage_bytes"] >= 24 * 32 * 64 * 2
        assert run["bytes"] == run["storage_bytes"]
        assert run["MiBps"] == pytest.approx(run["bytes"] / 2**20 / run["s"])
    assert result.stored["dask_chunks_read"] == "none"


def test_a_warm_call_counts_the_bytes_handed_over(tmp_path: Path) -> None:
    result = run_trial(task(tmp_path, cache="warm"))
    assert result.status == "ok", result.error
    run = result.reads["box"][0]
    assert run["cache"] == "warm" and run["bytes"] == run["rchar"] > 0


@pytest.mark.slow  # two processes that import xarray and dask: about 6 s
def test_concurrent_processes_each_call_the_function(tmp_path: Path) -> None:
    result = run_trial(task(tmp_path, concurrency=2))
    assert result.status == "ok", result.error
    run = result.reads["box"][0]
    assert run["processes"] == 2 and run["ops"] == 2


def test_a_missing_reference_fails_the_trial(tmp_path: Path) -> None:
    result = run_trial(dataclasses.replace(task(tmp_path), references=()))
    assert result.status == "failed"
    assert result.error == "VerificationError: read:box: no reference answer to compare with"
