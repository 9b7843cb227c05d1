"""Replaying a recorded grid: seeded, budgeted, noise-aware, and fast."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from iotune.app.tuning import grid_sweep, replay_outcome, replay_search
from iotune.model.records import Trial, TrialTask
from iotune.search.replay import ReplayMeasurer
from iotune.search.state import CONFIRM


def outcome(grid, **search):
    overrides = {f"search.{k}": v for k, v in search.items()}
    return replay_outcome(grid_sweep(grid, overrides, "grid"), grid)


def test_draws_come_from_the_recorded_repeats(small_grid) -> None:
    flat = small_grid.iotune._flat()
    i = int(np.flatnonzero(flat["status"].values == "ok")[0])
    tid = str(flat["trial_id"].values[i])
    recorded = set(flat["write_MiBps"].transpose("point", ...).values[i].tolist())
    sweep = grid_sweep(small_grid, {}, "grid")
    task = TrialTask(Trial(tid, "netcdf4", {}), sweep.workload, sweep.read, sweep.measure, "x")
    first = ReplayMeasurer(small_grid, seed=1).answer(task)
    again = ReplayMeasurer(small_grid, seed=1).answer(task)
    other = ReplayMeasurer(small_grid, seed=2).answer(task)
    assert first.status == "ok" and len(first.write) == 5
    assert {w["MiBps"] for w in first.write} <= recorded
    assert first.write == again.write and first.write != other.write
    assert set(first.reads) == {"full", "spatial", "timeseries"}


def test_a_configuration_the_grid_did_not_measure_fails(small_grid) -> None:
    sweep = grid_sweep(small_grid, {}, "grid")
    task = TrialTask(
        Trial("0123456789ab", "netcdf4", {}), sweep.workload, sweep.read, sweep.measure, "x"
    )
    found = ReplayMeasurer(small_grid, seed=1).answer(task)
    assert (found.status, found.error) == ("failed", "not a measured point of the replayed grid")


@pytest.mark.parametrize("strategy", ["random", "tpe", "auto", "grid"])
def test_the_budget_counts_every_trial(small_grid, strategy: str) -> None:
    found = outcome(small_grid, strategy=strategy, budget=10, objective="write", seed=4)
    assert len(found.steps) == 10 == found.budget
    again = [s for s in found.steps if s.kind == "remeasure"]
    assert len(found.state.visits) == 10 - len(again)
    assert len({s.id for s in found.steps}) == 10  # each measurement its own id
    assert found.leader is not None


def test_a_fraction_of_the_applicable_points(grid150) -> None:
    found = outcome(grid150, budget="25%", objective="read:timeseries", seed=0)
    assert found.applicable == 130 and found.budget == 33 == len(found.steps)


def test_seeded_and_reproducible(small_grid) -> None:
    a = outcome(small_grid, budget=8, seed=5, objective="write")
    b = outcome(small_grid, budget=8, seed=5, objective="write")
    c = outcome(small_grid, budget=8, seed=6, objective="write")
    ids = [[s.id for s in o.steps] for o in (a, b, c)]
    assert ids[0] == ids[1] != ids[2]


def test_the_pick_is_what_recommend_picks(small_grid) -> None:
    sweep = grid_sweep(small_grid, {"search.budget": 12, "search.objective": "write"}, "grid")
    ds = replay_search(sweep, small_grid)
    from iotune.analysis.recommend import recommend

    rec = recommend(ds, objective="write")
    assert rec.winner.coords == json.loads(ds.attrs["search_recommended"])
    assert rec.winner.label == ds.attrs["search_recommended_label"]
    assert rec.tie_note == ds.attrs["search_tie"]
    at = ds["trial_id"].values.tolist().index(ds.attrs["search_recommended_trial"])
    assert {n: ds[n].values[at].item() for n in rec.winner.coords} == rec.winner.coords


def test_re_measures_the_leader_before_recommending(grid150) -> None:
    found = outcome(grid150, budget=30, objective="write", seed=2)
    assert found.leader.measured >= CONFIRM
    assert any(s.kind == "remeasure" for s in found.steps)
    plain = outcome(grid150, budget=30, objective="write", seed=2, remeasure=0)
    assert all(s.kind == "explore" for s in plain.steps)


def test_thirty_seeds_of_a_150_point_grid_in_under_a_minute(grid150) -> None:
    start = time.perf_counter()
    for seed in range(30):
        outcome(grid150, budget="25%", objective="read:timeseries", seed=seed)
    assert time.perf_counter() - start < 60
