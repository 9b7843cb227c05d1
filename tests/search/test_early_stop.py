"""The early-stop policy: the rule each task carries, and when there is none."""

from __future__ import annotations

import pytest

from iotune.app.tuning import grid_sweep
from iotune.measuring.ratio import MIN_REPEATS
from iotune.search.early_stop import EarlyStopping
from iotune.search.outcome import Step
from iotune.search.racing import Racing
from tests.search.conftest import replayed_search


def measured(small_grid, **overrides):
    """A search of the small grid after 8 trials (a leader with repeats exists)."""
    search = replayed_search(small_grid, search__budget=8, search__seed=2, **overrides)
    search.run()
    return search


def test_a_task_carries_the_leaders_repeats(small_grid) -> None:
    search = measured(small_grid)
    step = Step("x", search.out.steps[-1].visit, "explore")
    rule = EarlyStopping(enabled=True, repeats=5).early_stop(search, step)
    assert rule is not None and rule.after == MIN_REPEATS
    leader = search.out.state.ranked(None)[0][1]
    assert rule.reference == pytest.approx(search.out.state.goal.repeat_scores(leader.ok))
    assert dict(rule.weights) == dict(search.out.state.goal.weights)


@pytest.mark.parametrize(
    ("enabled", "repeats", "kind"),
    [(False, 5, "explore"), (True, 3, "explore"), (True, 0, "explore"), (True, 5, "remeasure")],
)
def test_no_rule_when_nothing_would_be_saved(small_grid, enabled, repeats, kind) -> None:
    search = measured(small_grid)
    visit = search.out.steps[-1].visit
    policy = EarlyStopping(enabled=enabled, repeats=repeats)
    assert policy.early_stop(search, Step("x", visit, kind)) is None


def test_no_rule_before_a_leader_has_its_repeats(small_grid) -> None:
    search = replayed_search(small_grid, search__budget=8)
    assert not search.out.state.visits  # nothing measured yet
    found = search.space.resolve(next(iter(search.space.iterate())))
    assert not isinstance(found, str)
    step = Step("x", search.out.state.visit(found.coords, found.trial), "explore")
    assert EarlyStopping(enabled=True, repeats=5).early_stop(search, step) is None


def test_of_reads_the_spec(small_grid) -> None:
    sweep = grid_sweep(small_grid, {"search.early_stop": False}, "grid")
    assert not EarlyStopping.of(sweep).enabled
    adaptive = grid_sweep(small_grid, {"measure.repeats": "auto"}, "grid")
    assert EarlyStopping.of(adaptive).repeats == 0
    assert EarlyStopping.of(grid_sweep(small_grid, {}, "grid")).repeats == 5


def test_without_it_every_trial_runs_every_repeat(small_grid) -> None:
    policy = EarlyStopping(enabled=True, repeats=5)
    stopped = replayed_search(
        small_grid, search__budget=14, search__seed=2, policies=[policy, Racing()]
    ).run()
    assert any(s.result.stop == "stopped_early" for s in stopped.steps if s.result)
    kept = replayed_search(small_grid, search__budget=14, search__seed=2, policies=[Racing()])
    steps = kept.run().steps
    assert all(s.result is not None and len(s.result.write) == 5 for s in steps)
