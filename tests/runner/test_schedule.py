"""Interleaved repeats: seeded rounds, a journal line per repeat, resume after kill -9, probes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import iotune
from iotune.app.api import load_spec
from iotune.model.records import TrialResult
from iotune.runner.journal import Journal
from iotune.runner.plan import make_plan
from iotune.runner.schedule import Schedule, interleaves, merge, round_order, stop_reason


def _lines(journal: Path) -> list[tuple[str, str, int]]:
    """The journal's records after the header: (kind, trial id, repeat or probe number)."""
    out = []
    for line in journal.read_text().splitlines()[1:]:
        record = json.loads(line)
        if "part" in record:
            out.append(("part", record["id"], record["part"]))
        elif "probe" in record:
            out.append(("probe", record["id"], record["probe"]))
        else:
            out.append(("whole", record["id"], len(record["write"])))
    return out


def _memory_spec(make_spec, **measure) -> Path:
    return make_spec(
        {
            "backend": "memory",
            "parameters": {"codec": ["none", "zlib", "bzip2"], "level": [1, 9]},
            "read": {"patterns": ["full"]},
            "measure": {"repeats": 3, **measure},
        }
    )


def test_round_order_is_a_seeded_shuffle_that_differs_per_round_and_seed():
    ids = [f"t{i}" for i in range(12)]
    first = round_order(ids, seed=0, number=0)
    assert sorted(first) == sorted(ids)
    assert first == round_order(list(reversed(ids)), seed=0, number=0)  # input order is moot
    assert first != round_order(ids, seed=0, number=1)
    assert first != round_order(ids, seed=1, number=0)


def test_slab_trials_interleave_launched_ones_run_whole_unless_asked(small_spec, tmp_path):
    sweep = load_spec(_write(tmp_path, small_spec()))
    assert all(interleaves(t, sweep.measure) for t in make_plan(sweep).trials)
    data = small_spec({"backend": "mpiio", "read": {"patterns": ["full"]}})
    data["parameters"] = {"nprocs": 2}
    mpi = load_spec(_write(tmp_path, data))
    launched = make_plan(mpi).trials[0]
    assert not interleaves(launched, mpi.measure)
    data["measure"]["order"] = "interleaved"
    assert interleaves(launched, load_spec(_write(tmp_path, data)).measure)


def _write(tmp_path: Path, data: dict) -> Path:
    import yaml

    path = tmp_path / f"spec-{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _ok(trial_id: str, mibps: float) -> TrialResult:
    return TrialResult(trial_id, "ok", write=[{"s": 1.0, "cpu_s": 0.1, "MiBps": mibps}])


def test_rounds_run_repeat_r_of_every_trial_before_repeat_r_plus_one(make_spec, tmp_path):
    sweep = load_spec(_memory_spec(make_spec, noise_probes=0))
    plan = make_plan(sweep)
    journal = Journal(tmp_path / "j.jsonl", digest="d", name="s", resume=False)
    schedule = Schedule(plan, journal, lambda t: _task(t, sweep, tmp_path))
    rounds = []
    for batch in schedule.batches():
        rounds.append([(w.trial_id, w.number) for w in batch])
        for w in batch:
            assert w.task.measure.repeats == 1 and not w.task.measure.adaptive
            schedule.record(w, _ok(w.task.trial.id, 100.0))
    assert len(rounds) == 3
    ids = {t.id for t in plan.trials}
    for number, batch in enumerate(rounds):
        assert {i for i, _ in batch} == ids and {n for _, n in batch} == {number}
    assert set(journal.done) == ids
    assert all(len(r.write) == 3 and r.stop == "fixed" for r in journal.done.values())


def _task(trial, sweep, root):
    from iotune.model.records import TrialTask

    return TrialTask(trial, sweep.workload, sweep.read, sweep.measure, str(root))


def test_adaptive_interleaved_trials_stop_at_the_first_precise_round(make_spec, tmp_path):
    sweep = load_spec(_memory_spec(make_spec, repeats="auto", precision="5%", max_repeats=12))
    plan = make_plan(sweep)
    steady, noisy = plan.trials[0].id, plan.trials[1].id
    journal = Journal(tmp_path / "j.jsonl", digest="d", name="s", resume=False)
    schedule = Schedule(plan, journal, lambda t: _task(t, sweep, tmp_path))
    for batch in schedule.batches():
        for w in batch:
            wobble = 0.5 if w.number % 2 else 1.5  # +-50 %: never precise
            value = 100.0 * (wobble if w.trial_id == noisy else 1.0 + 0.001 * w.number)
            schedule.record(w, _ok(w.task.trial.id, value))
    assert len(journal.done[steady].write) == 6 and journal.done[steady].stop == "precision"
    assert len(journal.done[noisy].write) == 12 and journal.done[noisy].stop == "max_repeats"


def test_a_failed_repeat_ends_its_trial_as_failed():
    parts = {0: _ok("a", 1.0), 1: TrialResult("a", "failed", "disk full")}
    assert merge(parts).status == "failed" and merge(parts).error == "disk full"
    from iotune.model.spec import MeasureSpec

    assert stop_reason(merge(parts), MeasureSpec(repeats=5)) == "failed"


def test_probes_are_spread_through_the_run_and_land_in_the_dataset(make_spec, tmp_path):
    out = tmp_path / "out"
    ds = iotune.run(_memory_spec(make_spec, noise_probes=4), out=out, progress=False)
    tasks = [k for k, _, _ in _lines(out / "journal.jsonl") if k != "whole"]
    positions = [i for i, k in enumerate(tasks) if k == "probe"]
    # 2 chunks x (none, zlib 1 and 9, bzip2 1 and 9) x 3 repeats = 30 tasks:
    # 4 probes asked for, one before every 30 // 4 = 7 tasks
    assert len(tasks) == 30 + 5 and positions == [0, 8, 16, 24, 32]
    assert ds.sizes["probe"] == 5 and ds["noise_write_MiBps"].notnull().all()
    floors = ds.iotune.noise
    assert set(floors) == {"write", "read:full"} and all(v >= 0 for v in floors.values())
    assert "codec=none" in ds.attrs["noise_reference"]
    assert ds.attrs["order_seed"] == 0 and "interleaved" in ds.attrs["order"]
    ok = ds["status"] == "ok"
    assert int(ok.sum()) == 10
    assert (ds["repeats_used"].where(ok) == 3).sum() == 10
    assert (ds["repeats_stop"].where(ok, "fixed") == "fixed").all()


def test_sequential_order_runs_each_trial_whole(make_spec, tmp_path):
    out = tmp_path / "out"
    iotune.run(_memory_spec(make_spec, order="sequential"), out=out, progress=False)
    lines = _lines(out / "journal.jsonl")
    assert {k for k, _, _ in lines} == {"whole", "probe"}
    assert all(n == 3 for k, _, n in lines if k == "whole")


@pytest.mark.slow
def test_the_interleaved_order_resumes_after_kill_9_without_measuring_twice(small_spec, tmp_path):
    data = small_spec(
        {
            "workload": {"shape": {"time": 32, "y": 128, "x": 128}},
            "backend": "posix",
            "read": {"patterns": ["full"]},
            "measure": {"repeats": 4, "seed": 7},
        }
    )
    data["parameters"] = {"transfer_size": ["64KiB", "256KiB", "1MiB", "4MiB"]}
    spec = _write(tmp_path, data)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    iotune.run(spec, out=whole, progress=False)
    expected = _lines(whole / "journal.jsonl")
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(cut), "--no-progress"]
    proc = subprocess.Popen(cmd, start_new_session=True, stderr=subprocess.DEVNULL)
    journal = cut / "journal.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) > 9:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep, its workers, everything: no clean-up
    proc.wait()
    before = _lines(journal)
    assert 8 < len(before) < len(expected), "killed too late to test a resume"
    subprocess.run([*cmd, "--resume"], check=True, stderr=subprocess.DEVNULL, timeout=300)
    after = _lines(journal)
    assert after[: len(before)] == before
    measured = [(k, i, n) for k, i, n in after if k == "part"]
    assert len(measured) == len(set(measured)) == 16  # 4 trials x 4 repeats, none twice
    # the seeded order goes on where it stopped: the same sequence as an unbroken run
    assert measured == [(k, i, n) for k, i, n in expected if k == "part"]
    assert sorted(i for k, i, _ in after if k == "whole") == sorted(
        i for k, i, _ in expected if k == "whole"
    )


def test_the_probes_measure_the_baseline_where_the_spec_names_one(small_spec, tmp_path):
    from iotune.runner.schedule import reference_trial

    plain = make_plan(load_spec(_write(tmp_path, small_spec())))
    assert reference_trial(plain) == plain.trials[0]
    spec = small_spec({"baseline": {"chunks": [1, 64, 64], "codec": "zlib"}})
    plan = make_plan(load_spec(_write(tmp_path, spec)))
    ref = reference_trial(plan)
    assert ref != plan.trials[0]
    assert ref.params["codec"] == "zlib" and "1x64x64" in ref.label()


def test_a_trial_made_precise_by_its_last_allowed_repeat_stopped_for_precision():
    from iotune.model.spec import MeasureSpec

    measure = MeasureSpec(repeats=1, adaptive=True, precision=0.05, max_repeats=6)
    noisy = {r: _ok("a", 100.0 * (0.5 if r % 2 else 1.5)) for r in range(6)}
    steady = {r: _ok("a", 100.0 + r * 0.01) for r in range(6)}
    assert stop_reason(merge(noisy), measure) == "max_repeats"
    assert stop_reason(merge(steady), measure) == "precision"
    assert stop_reason(merge(dict(list(noisy.items())[:2])), measure) == ""
