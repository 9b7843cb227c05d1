"""The policy interface: the loop calls every hook, and a new policy plugs in alone."""

from __future__ import annotations

import json

from iotune.measuring.ratio import MIN_REPEATS
from iotune.model.records import EarlyStop
from iotune.search.early_stop import EarlyStopping
from iotune.search.loop import policies_for
from iotune.search.outcome import Outcome, Step
from iotune.search.policy import Loop, Policy
from iotune.search.racing import Racing
from iotune.search.results import search_dataset
from iotune.search.rungs import Rungs
from iotune.search.warm_start import WarmStart
from tests.search.conftest import replayed_search


class Pinned(Policy):
    """Measures one configuration first, stops nothing early, and says so in the results."""

    def __init__(self, coords: dict) -> None:
        self.coords, self.asked, self.told_ids = coords, False, []

    def propose(self, loop: Loop) -> Step | None:
        if self.asked:
            return None
        self.asked = True
        found = loop.space.resolve(self.coords)
        assert not isinstance(found, str)
        return loop.step(loop.out.state.visit(found.coords, found.trial), "pinned")

    def early_stop(self, loop: Loop, step: Step) -> EarlyStop | None:
        # a leader no repeat comes near: the trial is behind it beyond noise at once
        leader = (50.0, 50.1, 50.2)
        return EarlyStop((("write", 1.0),), leader) if step.kind == "pinned" else None

    def told(self, loop: Loop, step: Step) -> None:
        self.told_ids.append(step.id)

    def attrs(self, out: Outcome) -> dict:
        return {"search_pinned": json.dumps(self.coords)}


def test_the_default_policies_in_the_order_the_loop_calls_them(small_grid) -> None:
    search = replayed_search(small_grid, search__budget=4)
    kinds = [type(p) for p in search.policies]
    assert kinds == [Rungs, WarmStart, EarlyStopping, Racing]
    assert [type(p) for p in policies_for(search.space.sweep)] == kinds
    assert search.out.policies == tuple(search.policies)


def test_a_policy_that_overrides_nothing_changes_nothing(small_grid) -> None:
    plain = replayed_search(small_grid, search__budget=14, search__seed=2).run()
    defaults = replayed_search(small_grid, search__budget=14, search__seed=2).policies
    extra = replayed_search(
        small_grid, search__budget=14, search__seed=2, policies=[*defaults, Policy()]
    ).run()
    assert [(s.id, s.kind, s.score) for s in extra.steps] == [
        (s.id, s.kind, s.score) for s in plain.steps
    ]


def test_a_new_policy_proposes_first_stops_its_trial_and_records(small_grid) -> None:
    coords = {"chunks": "1x64x64", "codec": "bzip2", "chunk_cache": 67108864}
    pinned = Pinned(coords)
    defaults = replayed_search(small_grid, search__budget=6, search__seed=1).policies
    search = replayed_search(
        small_grid, search__budget=6, search__seed=1, policies=[pinned, *defaults]
    )
    logged: list[dict] = []
    search.log = logged.append
    out = search.run()
    first = out.steps[0]
    assert first.kind == "pinned" and logged[0]["kind"] == "pinned"
    assert {k: str(v) for k, v in first.visit.coords.items()} == {
        k: str(v) for k, v in coords.items()
    }
    assert first.result is not None and first.result.stop == "stopped_early"
    assert len(first.result.write) == MIN_REPEATS  # far behind: stopped once it may be
    assert pinned.told_ids == [s.id for s in out.steps]
    ds = search_dataset(search.space.sweep, out)
    assert json.loads(ds.attrs["search_pinned"]) == coords
    assert list(ds["search_kind"].values[:1]) == ["pinned"]
    assert "search_prior" in ds.attrs  # the default policies still record theirs


def test_without_policies_the_sampler_fills_every_batch(small_grid) -> None:
    out = replayed_search(small_grid, search__budget=14, search__seed=2, policies=[]).run()
    assert len(out.steps) == 14 and {s.kind for s in out.steps} == {"explore"}
    assert not any(s.result.stop == "stopped_early" for s in out.steps if s.result)
    assert "search_prior" not in out.policy_attrs()
