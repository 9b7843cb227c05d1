"""The racing policy: the leader and its near-ties measured again until the pick is sure."""

from __future__ import annotations

from iotune.search.early_stop import EarlyStopping
from iotune.search.racing import Racing
from iotune.search.state import CONFIRM
from tests.search.conftest import replayed_search


def test_the_pick_is_measured_confirm_times(small_grid) -> None:
    out = replayed_search(small_grid, search__budget=14, search__seed=2).run()
    assert out.leader is not None and out.leader.measured >= CONFIRM
    remeasured = [s for s in out.steps if s.kind == "remeasure"]
    assert remeasured and all(s.id.count(".") == 1 for s in remeasured)  # "<trial>.2" ...


def test_without_it_nothing_is_measured_twice(small_grid) -> None:
    policies = [EarlyStopping(enabled=True, repeats=5)]
    out = replayed_search(small_grid, search__budget=14, search__seed=2, policies=policies).run()
    assert {s.kind for s in out.steps} == {"explore"}
    assert len({s.visit.trial.id for s in out.steps}) == 14


def test_it_keeps_the_remeasure_share_of_the_budget(small_grid) -> None:
    out = replayed_search(
        small_grid, search__budget=20, search__seed=1, search__remeasure=0.3
    ).run()
    kinds = [s.kind for s in out.steps]
    assert kinds[:14] == ["explore"] * 14  # 30 % of 20 kept for the race
    assert "remeasure" in kinds[14:]


def test_remeasure_skips_what_the_batch_holds_and_stops_at_k(small_grid) -> None:
    search = replayed_search(small_grid, search__budget=6, search__seed=2, policies=[])
    search.run()  # every visit measured once: the best needs confirming
    racing = Racing()
    (first,) = racing.remeasure(search, [], 1)
    leader = search.out.state.ranked()[0][1]
    assert first.kind == "remeasure" and first.visit is leader
    assert first.id == f"{leader.trial.id}.2"
    assert racing.remeasure(search, [first], 2) == []  # the leader is unconfirmed: only it


def test_a_time_budget_with_nothing_left_to_learn_is_kept(small_grid) -> None:
    total = float(small_grid["trial_s"].sum())
    out = replayed_search(small_grid, search__budget=f"{10 * total}s", search__seed=3).run()
    assert len(out.state.visits) == 24  # every configuration measured
    assert out.spent < total  # the race settled: the rest of the machine's time is kept
    assert out.leader is not None and out.leader.measured >= CONFIRM
