"""The warm-start policy: a prior's best measured first, then told to the sampler."""

from __future__ import annotations

import json
import math

import pytest

from iotune.app.tuning import goal_of, grid_sweep
from iotune.search.outcome import Step
from iotune.search.prior import SEEDS, load_priors
from iotune.search.warm_start import WarmStart
from tests.search.conftest import replayed_search


@pytest.fixture(scope="module")
def priors(small_grid):
    """The small grid itself, as a prior of a search of it (two copies, named apart)."""
    sweep = grid_sweep(small_grid, {"search.objective": "read:timeseries"}, "grid")
    weights = goal_of(sweep, sweep.search).weights
    first, second = small_grid.copy(), small_grid.isel(codec=[0, 1]).copy()
    first.attrs["name"], second.attrs["name"] = "first", "second"
    return load_priors([first, second], sweep, weights)


def test_seeds_take_each_priors_best_in_turn(priors) -> None:
    policy = WarmStart(priors)
    first, second = priors
    assert policy.seeds[:2] == [first.points[0], second.points[0]]
    assert len(policy.seeds) == 2 * SEEDS


def test_seeds_go_first_then_the_prior_is_told_on_this_runs_scale(small_grid, priors) -> None:
    search = replayed_search(small_grid, search__budget=12, search__seed=1, prior=priors)
    policy = search.policies[1]
    assert isinstance(policy, WarmStart)
    assert [r["offset"] for r in search.out.prior] == [None, None]  # recorded at start
    out = search.run()
    kinds = [s.kind for s in out.steps]
    seeded = kinds.count("prior")
    assert seeded >= SEEDS and kinds[:seeded] == ["prior"] * seeded
    assert policy.prior == [] and policy.seeds == []  # told to the sampler
    for record in out.prior:  # each seed measured here: the scale of this grid, itself
        assert record["seeds_measured"] >= 1 and math.isfinite(record["offset"])
        assert "points" not in record
    assert json.loads(policy.attrs(out)["search_prior"]) == out.prior


def test_a_measured_seed_is_not_proposed_again(small_grid, priors) -> None:
    search = replayed_search(small_grid, search__budget=12, prior=priors)
    policy = search.policies[1]
    assert isinstance(policy, WarmStart)
    asked = [policy.propose(search) for _ in range(2 * SEEDS)]
    ids = [s.visit.trial.id for s in asked if s is not None]
    assert len(ids) == len(set(ids))  # the two priors share their best: asked once
    assert None in asked and policy.seeds == []


def test_a_resumed_prior_trial_takes_its_seed_off(small_grid, priors) -> None:
    search = replayed_search(small_grid, search__budget=12, prior=priors)
    policy = search.policies[1]
    assert isinstance(policy, WarmStart)
    seed = policy.seeds[0]
    found = search.space.resolve(seed.coords)
    assert not isinstance(found, str)
    step = Step(found.trial.id, search.out.state.visit(found.coords, found.trial), "prior")
    policy.resumed(search, step)
    assert not any(p.matches(seed.coords) for p in policy.seeds)


def test_where_the_sampler_stalls_the_priors_order_goes_on(small_grid, priors) -> None:
    search = replayed_search(small_grid, search__budget=12, prior=priors)
    policy = search.policies[1]
    assert isinstance(policy, WarmStart)
    policy.ranked = [p.coords for p in priors[0].points[:3]]
    best = search.space.resolve(priors[0].points[0].coords)
    assert not isinstance(best, str)
    skip = {best.trial.id}
    found = policy.propose_stalled(search, skip)
    assert found is not None and found.trial.id not in skip
    assert priors[0].points[1].matches(found.coords)
    assert policy.propose_stalled(search, skip) is not None
    assert policy.propose_stalled(search, skip) is None  # nothing left in its order


def test_without_a_prior_it_does_nothing(small_grid) -> None:
    search = replayed_search(small_grid, search__budget=4)
    policy = WarmStart()
    assert policy.propose(search) is None and policy.propose_stalled(search, set()) is None
    policy.before_batch(search)
    assert search.out.prior == [] and policy.attrs(search.out) == {"search_prior": "[]"}
