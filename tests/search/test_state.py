"""Who leads: pooled scores, confirmation, and what to re-measure."""

from __future__ import annotations

import math

import pytest

from iotune.model.records import Trial, TrialResult
from iotune.search.state import CONFIRM, Goal, State


def result(tid: str, write: list[float], *, size: int = 100, read: list[float] | None = None):
    reads = {"full": [{"MiBps": v} for v in read]} if read else {}
    return TrialResult(
        tid, "ok", write=[{"MiBps": v} for v in write], reads=reads, file_bytes=size, raw_bytes=200
    )


def state_of(measured: dict[str, list[list[float]]], **limits) -> State:
    state = State(Goal({"write": 1.0}, limits))
    for name, trials in measured.items():
        visit = state.visit({"p": name}, Trial(name, "memory", {}))
        visit.results += [result(name, w) for w in trials]
    return state


def test_a_lucky_single_trial_is_not_the_pick() -> None:
    lucky = [[300.0, 310.0, 305.0]]
    steady = [[200.0, 201.0, 199.0]] * CONFIRM
    state = state_of({"lucky": lucky, "steady": steady})
    assert state.ranked()[0][1].trial.id == "lucky"  # the best pooled score ...
    assert state.leader().trial.id == "steady"  # ... is not confirmed, so not the pick
    assert [v.trial.id for v in state.to_remeasure(2)] == ["lucky"]  # measure it again


def test_pooled_scores_decide_once_confirmed() -> None:
    once_lucky = [[300.0, 300.0, 300.0], [150.0, 150.0, 150.0], [150.0, 140.0, 160.0]]
    steady = [[200.0, 201.0, 199.0]] * CONFIRM
    state = state_of({"once_lucky": once_lucky, "steady": steady})
    assert state.leader().trial.id == "steady"
    assert state.to_remeasure(2) == []  # separated beyond noise: the race is settled


def test_contenders_not_separated_are_measured_until_confirmed() -> None:
    top = [[200.0, 210.0, 190.0]] * CONFIRM
    close = [[198.0, 205.0, 185.0]]
    far = [[50.0, 52.0, 51.0]]
    state = state_of({"top": top, "close": close, "far": far})
    assert [v.trial.id for v in state.to_remeasure(3)] == ["close"]


def test_scores_are_weighted_geometric_means_of_pooled_medians() -> None:
    goal = Goal({"write": 1.0, "read:full": 3.0})
    results = [result("a", [100.0, 100.0], read=[400.0, 400.0]), result("a", [100.0], read=[10.0])]
    expected = (math.log(100.0) + 3 * math.log(400.0)) / 4
    assert goal.score(results) == pytest.approx(expected)
    assert goal.repeat_scores(results).size == 3


def test_max_size_excludes_a_point() -> None:
    state = state_of({"a": [[300.0]] * 3, "b": [[100.0]] * 3}, max_size=50)
    assert state.leader() is None


def test_a_search_scores_the_users_code_by_its_time_a_call() -> None:
    """Fewer bytes from storage (a compressed layout) is not slower when the call is faster."""
    goal = Goal({"read:mine": 1.0}, per_call=frozenset({"read:mine"}))
    fast_small = TrialResult("a", "ok", reads={"mine": [{"MiBps": 10.0, "s": 0.01}] * 3})
    slow_big = TrialResult("b", "ok", reads={"mine": [{"MiBps": 50.0, "s": 0.02}] * 3})
    assert goal.score([fast_small]) == pytest.approx(math.log(100.0))  # calls a second
    assert goal.score([fast_small]) > goal.score([slow_big])
    by_rate = Goal({"read:mine": 1.0})  # as a built-in pattern is scored: MiB/s
    assert by_rate.score([fast_small]) < by_rate.score([slow_big])
