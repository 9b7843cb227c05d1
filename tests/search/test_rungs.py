"""The rungs policy: new configurations start cheap, the best climb to full size."""

from __future__ import annotations

import json

import pytest

from iotune.search.early_stop import EarlyStopping
from iotune.search.fidelity import CLIMB
from iotune.search.racing import Racing
from iotune.search.rungs import Rungs
from tests.search.conftest import SMALL_SPACE, _synthetic, replayed_search


@pytest.fixture(scope="module")
def rungs_grid():
    """The small space at fidelities 0.25 and 1 (a trial at f costs 0.3 + 4 f seconds)."""
    return _synthetic()({**SMALL_SPACE, "parameters.fidelity": [0.25, 1]}, seed=1, noise=0.2)


def full_seconds(grid) -> float:
    return float(grid["trial_s"].sel(fidelity=1.0).sum())


def test_with_one_rung_it_leaves_the_batch_to_others(small_grid) -> None:
    search = replayed_search(small_grid, search__budget=4)
    assert Rungs().plan(search, 2) is None
    assert Rungs().attrs(search.out) == {}


class Watch(Rungs):
    """The rungs policy, noting where each configuration it climbs ranked at the entry
    rung among those not yet at full size, when it chose it."""

    def __init__(self) -> None:
        super().__init__()
        self.ranks: dict[str, int] = {}

    def plan(self, loop, k):
        out = loop.out
        at_top = {v.config for v in out.state.visits.values() if v.fidelity == 1.0}
        ranked = [v.config for _s, v in out.state.ranked(0.25) if v.config not in at_top]
        batch = super().plan(loop, k)
        for step in batch or []:
            if step.kind in ("promote", "control"):
                self.ranks[step.id] = ranked.index(step.visit.config)
        return batch


def watched(grid, budget: str) -> tuple[Watch, object]:
    watch = Watch()
    search = replayed_search(grid, search__budget=budget)
    search.policies[0] = watch
    return watch, search.run()


def test_it_explores_cheap_then_climbs_the_best_first(rungs_grid) -> None:
    watch, out = watched(rungs_grid, f"{full_seconds(rungs_grid)}s")
    kinds = [s.kind for s in out.steps]
    first = kinds.index("promote")
    assert first > CLIMB and all(s.visit.fidelity == 0.25 for s in out.steps[:first])
    assert watch.ranks[out.steps[first].id] == 0  # the entry rung's best climbs first
    for step in out.steps:
        if step.kind in ("promote", "control"):
            assert step.visit.fidelity == 1.0
    assert out.leader is not None and out.leader.fidelity == 1.0


def test_every_other_extra_climb_is_a_control_from_the_lower_half(rungs_grid) -> None:
    watch, out = watched(rungs_grid, f"{3 * full_seconds(rungs_grid)}s")
    climbs = [s for s in out.steps if s.kind in ("promote", "control")]
    controls = [s for s in climbs if s.kind == "control"]
    assert len(controls) >= 2
    assert climbs[CLIMB].kind == "control"  # the first extra one (no near-tie climbed here)
    for step in controls:
        assert watch.ranks[step.id] >= 1  # never the best not yet at full size


def test_without_it_nothing_climbs(rungs_grid) -> None:
    out = replayed_search(
        rungs_grid,
        search__budget=12,
        policies=[EarlyStopping(enabled=True, repeats=5), Racing()],
    ).run()
    assert {s.visit.fidelity for s in out.steps} == {0.25}
    assert out.leader is None  # only full size is ever recommended


def test_it_records_the_rungs_and_their_correlation(rungs_grid) -> None:
    out = replayed_search(rungs_grid, search__budget=f"{3 * full_seconds(rungs_grid)}s").run()
    attrs = Rungs().attrs(out)
    assert json.loads(attrs["search_fidelity_rungs"]) == [0.25, 1.0]
    found = json.loads(attrs["search_rank_correlation"])["0.25"]
    assert found["configurations"] >= 6 and found["spearman"] > 0.5
    assert attrs["search_fidelity_fallback"] == ""


def test_a_dropped_rung_makes_every_configuration_new_again(rungs_grid) -> None:
    scrambled = _synthetic()(
        {**SMALL_SPACE, "parameters.fidelity": [0.25, 1]}, seed=1, noise=0.2, scramble=True
    )
    search = replayed_search(
        scrambled, search__budget=f"{3 * full_seconds(scrambled)}s", search__seed=2
    )
    out = search.run()
    assert out.ladder.dropped_at > 0 and not out.ladder.multi
    after = out.steps[out.ladder.dropped_at :]
    assert any(s.kind == "explore" for s in after)
    assert all(s.visit.fidelity == 1.0 for s in after)
    assert "ranks unlike full size" in Rungs().attrs(out)["search_fidelity_fallback"]
