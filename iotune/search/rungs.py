"""The fidelity-rungs policy: explore at the cheapest rung, climb the best to full size.

While the ladder (:class:`~iotune.search.fidelity.Ladder`) has a rung below
full size, this policy chooses every batch: new configurations at the entry rung
(:meth:`Loop.fill <iotune.search.policy.Loop.fill>`) until only the climb's
reserve is left (:data:`~iotune.search.fidelity.CLIMB` configurations at full size
plus a confirmation), then the climb: the entry rung's best to full size
(``promote``), then its near-ties while the budget leaves room to confirm, then
the re-measurements the other policies ask for, then, once the race is settled,
the rest best first with every other one a ``control`` (from the cheap rung's
lower half, at random: the climbed are too alike for a rank correlation to say
anything alone).  Each full-size result has the ladder judge the entry rung;
when it is dropped, the sampler relearns from the next rung only and the
configurations are new again there.  Once the ladder has one rung left, other
policies choose the batches.
"""

from __future__ import annotations

import json
import math
from typing import Any

from iotune.search.fidelity import CLIMB
from iotune.search.outcome import Outcome, Step
from iotune.search.policy import Loop, Policy
from iotune.search.state import CONFIRM, Visit


class Rungs(Policy):
    """Multi-fidelity: new configurations start cheap and the best climb to full size."""

    def __init__(self) -> None:
        #: (configuration, fidelity) that does not apply (a backend refused that workload)
        self.unfit: set[tuple] = set()

    def plan(self, loop: Loop, k: int) -> list[Step] | None:
        if not loop.out.ladder.multi:
            return None
        if self.climbing(loop):
            return self._climb(loop, k)
        return loop.fill([], k) or self._climb(loop, k)

    def climbing(self, loop: Loop) -> bool:
        """Whether only the climb's reserve is left: the best cheap ones go to full size."""
        out = loop.out
        limit, reserve = out.limit, CLIMB + CONFIRM - 1
        entry = sum(1 for v in out.state.visits.values() if v.ok and v.fidelity == out.ladder.entry)
        if entry < CLIMB and not loop.exhausted:  # nothing to choose from yet
            return False
        if limit.trials is not None:  # full-size trials: a cheap one spent its share
            return out.spent >= limit.total - max(reserve, limit.remeasure * limit.total)
        return out.spent >= limit.total - reserve * out.ladder.top_cost(out.steps)

    def _climb(self, loop: Loop, k: int) -> list[Step]:
        """Promote the entry rung's best to full size, then its near-ties, racing them."""
        out, steps = loop.out, list[Step]()
        state, ladder, limit = out.state, out.ladder, out.limit
        promotions = ladder.promotions(state, self._taken(out))
        at_top = {v.config for v in state.visits.values() if v.fidelity == ladder.top}
        while len(steps) < k and promotions and len(at_top) + len(steps) < CLIMB:
            steps += filter(None, [self._promoted(loop, *promotions.pop(0)[:2])])
        confirm = (CONFIRM - 1) * (ladder.top_cost(out.steps) if limit.seconds else 1)
        room = limit.room_after(out.steps, 1, confirm)
        tied = [p for p in promotions if p[2]]
        while len(steps) < k and tied and room:
            steps += filter(None, [self._promoted(loop, *tied.pop(0)[:2])])
        if len(steps) < k:
            steps += loop.remeasure(steps, k)
        rest = [p for p in promotions if not p[2]]
        while len(steps) < k and rest and room:  # the race is settled: one more
            if self._control_due(out):
                step = self._control(loop, rest)
            else:
                step = self._promoted(loop, *rest.pop(0)[:2])
            steps += filter(None, [step])
        return steps or loop.confirm()

    def _control_due(self, out: Outcome) -> bool:
        """Every other extra promotion is a control: the climbed configurations are the
        cheap rung's best, too alike for a rank correlation to say anything alone."""
        kinds = [s.kind for s in out.steps if s.kind in ("promote", "control")]
        return len(kinds) >= CLIMB and kinds.count("control") * 2 < len(kinds) - CLIMB + 1

    def _control(self, loop: Loop, rest: list[tuple[Visit, float, bool]]) -> Step | None:
        """A configuration from the cheap rung's lower half, at random, to full size."""
        lower = rest[len(rest) // 2 :] or rest
        pick = lower[int(loop.rng.integers(len(lower)))]
        rest.remove(pick)
        step = self._promoted(loop, *pick[:2])
        if step is not None:
            step.kind = "control"
        return step

    def _taken(self, out: Outcome) -> set[tuple]:
        """Each configuration at each fidelity asked so far (or that does not apply)."""
        return {(v.config, v.fidelity) for v in out.state.visits.values()} | self.unfit

    def _promoted(self, loop: Loop, visit: Visit, fidelity: float) -> Step | None:
        """``visit``'s configuration at ``fidelity``; None where it does not apply there
        (a backend may refuse the full-size workload: then it is never asked again)."""
        found = loop.space.resolve({**visit.coords, "fidelity": fidelity})
        if isinstance(found, str):
            self.unfit.add((visit.config, fidelity))
            return None
        return loop.step(loop.out.state.visit(found.coords, found.trial), "promote")

    def told(self, loop: Loop, step: Step) -> None:
        """A full-size result: judge the entry rung; dropped, the sampler starts over."""
        out = loop.out
        if step.visit.fidelity != out.state.top:
            return
        controls = {s.visit.config for s in out.steps if s.kind == "control"}
        if out.ladder.check(out.state, controls):  # low fidelity dropped
            out.ladder.dropped_at = len(out.steps)
            loop.exhausted = False  # the configurations are new again at the next rung
            loop.proposer.reseed(loop.entry_scores(), [])  # it learns the new entry only

    def attrs(self, out: Outcome) -> dict[str, Any]:
        """The rungs, how each ranked against full size, and whether one was dropped."""
        ladder = out.ladder
        if ladder.top is None:
            return {}
        correlation = {
            f"{k:g}": {"spearman": rho if math.isfinite(rho) else None, "configurations": n}
            for k, (rho, n) in ladder.correlation.items()
        }
        return {
            "search_fidelity_rungs": json.dumps(list(ladder.rungs)),
            "search_rank_correlation": json.dumps(correlation),
            "search_fidelity_fallback": ladder.fallback,
        }
