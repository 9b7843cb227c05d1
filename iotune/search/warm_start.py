"""The warm-start policy: earlier results (``search.prior``) measured first, then learnt.

Each prior's best :data:`~iotune.search.prior.SEEDS` configurations (loaded and
ranked by :mod:`iotune.search.prior`) are proposed before the sampler's, at the
entry rung (``prior`` trials, told to the sampler like its own).  Once every
seed is measured, the prior is put on this run's scale
(:func:`~iotune.search.prior.calibrate`) and the sampler is reseeded with it,
weighted down (:class:`~iotune.search.strategies.PriorWeights`).  Where the
sampler then stalls (TPE keeps proposing the prior's measured best), the prior's
own order goes on.  What each prior was and how it was scaled is the results'
``search_prior`` (and :attr:`Outcome.prior <iotune.search.outcome.Outcome.prior>`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from iotune.search.outcome import Outcome, Step
from iotune.search.policy import Loop, Policy
from iotune.search.prior import SEEDS, Prior, PriorPoint, calibrate
from iotune.search.space import Resolved


class WarmStart(Policy):
    """Seed the search with earlier results; nothing to do without any."""

    def __init__(self, prior: Sequence[Prior] = ()) -> None:
        self.prior = list(prior)
        #: configurations to measure first: each prior's best, round robin
        self.seeds = [p.points[i] for i in range(SEEDS) for p in self.prior if i < len(p.points)]
        #: the prior's configurations, best first, once told to the sampler
        self.ranked: list[dict[str, Any]] = []

    def start(self, loop: Loop) -> None:
        # recorded now, so results say where the prior came from even if stopped early
        self._calibrated(loop)

    def resumed(self, loop: Loop, step: Step) -> None:
        if step.kind == "prior":
            self.seeds = [p for p in self.seeds if not p.matches(step.visit.coords)]

    def before_batch(self, loop: Loop) -> None:
        """Once every seed is measured, tell the sampler the prior, scaled."""
        if not self.prior or self.seeds:
            return
        told = loop.entry_scores()
        scaled = self._calibrated(loop)
        loop.proposer.reseed(told, scaled)
        self.prior = []
        self.ranked = [c for c, _v in sorted(scaled, key=lambda cv: -cv[1])]

    def _calibrated(self, loop: Loop) -> list[tuple[dict[str, Any], float]]:
        """Records each prior on the outcome; its points on this run's scale."""
        out = loop.out
        out.prior = calibrate(self.prior, out.state, out.ladder.entry)
        scaled = [(p.coords, p.score + r["offset"]) for r in out.prior for p in r["points"]]
        for record in out.prior:
            del record["points"]
        return scaled

    def propose(self, loop: Loop) -> Step | None:
        while self.seeds:
            step = self._seeded(loop, self.seeds.pop(0))
            if step is not None:
                return step
        return None

    def _seeded(self, loop: Loop, point: PriorPoint) -> Step | None:
        state = loop.out.state
        found = loop.space.resolve({**point.coords, "fidelity": loop.out.ladder.entry})
        if isinstance(found, str) or found.trial.id in state.visits:
            return None
        return loop.step(state.visit(found.coords, found.trial), "prior")

    def propose_stalled(self, loop: Loop, skip: set[str]) -> Resolved | None:
        """The prior's best configuration not yet measured."""
        while self.ranked:
            coords = self.ranked.pop(0)
            found = loop.space.resolve({**coords, "fidelity": loop.out.ladder.entry})
            if not isinstance(found, str) and found.trial.id not in skip:
                return found
        return None

    def told(self, loop: Loop, step: Step) -> None:
        if step.kind == "prior" and step.result is not None:
            goal = loop.out.state.goal
            loop.proposer.add(step.visit.coords, step.score, over_size=goal.over_size(step.result))

    def attrs(self, out: Outcome) -> dict[str, Any]:
        return {"search_prior": json.dumps(out.prior)}
