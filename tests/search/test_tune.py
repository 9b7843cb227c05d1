"""Real searches: measured by the executors, interrupted, killed and resumed."""

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

import iotune
from iotune.core.errors import SpecError, UsageError

SPEC = {
    "version": 1,
    "name": "tiny-search",
    "workload": {"shape": {"time": 8, "y": 32, "x": 32}, "dtype": "int16"},
    "backend": "memory",
    "parameters": {
        "chunks": [[8, 32, 32], [1, 32, 32], [8, 8, 8], [2, 16, 16]],
        "codec": ["none", "zlib", "blosc-lz4"],
        "level": [1, 5],
        "shuffle": ["none", "byte"],
    },
    "read": {"patterns": ["full", "timeseries"], "timeseries": {"pixels": 4}},
    "measure": {"repeats": 2, "cache": "warm", "fsync": False},
    "search": {"strategy": "auto", "budget": 8, "objective": "write", "seed": 3},
}


def write_spec(path: Path, **changes) -> Path:
    spec = json.loads(json.dumps(SPEC))
    spec["search"].update(changes.pop("search", {}))
    spec.update(changes)
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def journal_ids(out: Path) -> list[str]:
    lines = (out / "journal.jsonl").read_text().splitlines()[1:]
    return [json.loads(line)["id"] for line in lines if line.strip()]


@pytest.mark.slow
def test_a_search_spends_its_budget_and_recommends(tmp_path: Path) -> None:
    out = tmp_path / "out"
    ds = iotune.tune(write_spec(tmp_path / "s.yaml"), out=out, progress=False)
    assert ds.attrs["search_trials"] == 8 == len(journal_ids(out))
    assert ds["measurements"].sum() == 8
    picked = iotune.recommend(ds, objective="write", importance=False).winner
    assert picked.coords == json.loads(ds.attrs["search_recommended"])
    assert iotune.open_results(out).attrs["search_strategy"] == "auto"


@pytest.mark.slow
def test_interrupted_and_resumed_it_measures_no_trial_twice(tmp_path: Path) -> None:
    spec, out = write_spec(tmp_path / "s.yaml"), tmp_path / "out"
    seen: list[str] = []

    def stop_after_three(result) -> None:
        seen.append(result.id)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        iotune.tune(spec, out=out, progress=False, on_result=stop_after_three)
    assert len(journal_ids(out)) == 3
    ds = iotune.tune(spec, out=out, resume=True, progress=False, on_result=seen.append)
    ids = journal_ids(out)
    assert len(ids) == len(set(ids)) == 8
    assert seen[:3] == ids[:3] and len(seen) == 8  # the resumed run measured the other five
    assert ds.attrs["search_trials"] == 8


def kill_after(command: list[str], out: Path, *, trials: int) -> None:
    """Run ``command`` and SIGKILL its process group once ``trials`` are journaled."""
    proc = subprocess.Popen(command, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (out / "journal.jsonl").exists() and len(journal_ids(out)) >= trials:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.mark.slow
def test_killed_with_sigkill_and_resumed(tmp_path: Path) -> None:
    spec, out = write_spec(tmp_path / "s.yaml", search={"budget": 10}), tmp_path / "out"
    command = [sys.executable, "-m", "iotune", "tune", str(spec), "-o", str(out), "--no-progress"]
    kill_after(command, out, trials=3)
    before = journal_ids(out)
    assert 3 <= len(before) < 10
    done = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    ids = journal_ids(out)
    assert ids[: len(before)] == before and len(ids) == len(set(ids)) == 10
    assert "recommended for write:" in done.stdout


@pytest.mark.slow
def test_on_a_dask_local_cluster_with_two_workers(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path / "s.yaml",
        execution={"executor": "dask", "workers": 2},
        search={"budget": 6, "parallel": 2},
    )
    ds = iotune.tune(spec, out=tmp_path / "out", progress=False)
    assert ds.attrs["search_trials"] == 6
    assert ds.attrs["executor"] == "dask"
    assert ds.attrs["search_recommended"]


def test_resume_of_another_search_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "journal.jsonl").write_text('{"journal":1,"digest":"0000","name":"x"}\n')
    with pytest.raises(UsageError, match="belongs to sweep 'x' with other settings"):
        iotune.tune(write_spec(tmp_path / "s.yaml"), out=out, resume=True, progress=False)


def test_bad_search_options_are_spec_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"search\.budget: 'x%' is not a number"):
        iotune.tune(write_spec(tmp_path / "s.yaml"), budget="x%", out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_quick_yaml_on_dask_killed_and_resumed(tmp_path: Path) -> None:
    """The acceptance run: quick.yaml-sized trials, a LocalCluster of 2, kill -9, --resume."""
    quick = Path(__file__).resolve().parents[2] / "sweeps" / "quick.yaml"
    out = tmp_path / "out"
    command = [sys.executable, "-m", "iotune", "tune", str(quick), "-o", str(out)]
    command += ["--workers", "2", "--budget", "8", "--objective", "read:timeseries"]
    command += ["--no-progress", "--scratch", str(tmp_path)]
    proc = subprocess.Popen(command, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "journal.jsonl").exists() and len(journal_ids(out)) >= 3:
            break
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = journal_ids(out)
    assert 3 <= len(before) < 8
    done = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    ids = journal_ids(out)
    assert ids[: len(before)] == before and len(ids) == len(set(ids)) == 8
    ds = iotune.open_results(out)
    assert ds.attrs["executor"] == "dask" and ds.attrs["search_trials"] == 8
    assert "recommended for read:timeseries:" in done.stdout


@pytest.mark.slow
def test_a_million_point_space_stays_under_300_mib() -> None:
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "search_memory.py"
    done = subprocess.run(
        [sys.executable, str(script), "--budget", "30"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip().splitlines()[-1]
    assert "space 1,140,480 points" in line and "30 trials" in line
    peak = float(line.split("peak RSS: search ")[1].split(" MiB")[0])
    assert peak < 300, line
