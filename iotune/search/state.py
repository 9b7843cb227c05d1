"""What a search knows: each configuration visited, its measurements, and who leads.

A configuration's figure is its *pooled* score: every measurement of it (each
trial's repeats) pooled, each metric's median taken, and the weighted geometric
mean of those medians (as :mod:`iotune.results.objective` scores a grid point).
A trial's own score is the same over its repeats alone; that is what the
sampler is told.  Whether a contender can be told from the leader is judged on
per-repeat scores by the comparison ``recommend`` ties by
(:func:`iotune.measuring.ratio.gap_of`, through :func:`tied`), so the race
re-measures, the climb promotes and an early stop ends what the pick would (or
would not) call a tie.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iotune.measuring.precision import series
from iotune.measuring.ratio import MIN_REPEATS, gap_of
from iotune.model.objective import Objective
from iotune.model.records import Trial, TrialResult
from iotune.results.lossy import errors_of_result, lossless_or_within

#: measurements a configuration needs before it may be recommended: one trial and at
#: least one re-measurement (2 beat 3 on the synthetic grids of benchmarks/, where the
#: pick's loss comes from points never visited far more than from noise)
CONFIRM = 2


@dataclass
class Visit:
    """One configuration the search measured (a point of the results)."""

    index: int
    coords: dict[str, Any]
    trial: Trial
    results: list[TrialResult] = field(default_factory=list)

    @property
    def ok(self) -> list[TrialResult]:
        return [r for r in self.results if r.status == "ok"]

    @property
    def measured(self) -> int:
        """Measurements that succeeded."""
        return len(self.ok)

    @property
    def fidelity(self) -> float | None:
        """The share of the workload it was measured at (None: no fidelity rungs)."""
        value = self.coords.get("fidelity")
        return None if value is None else float(value)

    @property
    def config(self) -> tuple:
        """The configuration without its fidelity: the same at every rung."""
        return tuple(sorted((k, str(v)) for k, v in self.coords.items() if k != "fidelity"))

    @property
    def seconds(self) -> float:
        """Wall time its trials took."""
        return sum(r.seconds for r in self.results)


@dataclass(frozen=True)
class Goal:
    """The objective's weights and limits (``max_size`` bytes, ``max_ratio_loss``, ``readers``)."""

    weights: Mapping[str, float]
    limits: Mapping[str, Any] = field(default_factory=dict)
    #: the full-size workload's bytes: a cheap trial's stored size is judged scaled up
    full_bytes: int = 0
    #: the metrics of the user's own code: judged by calls per second, not MiB/s
    #: (:mod:`iotune.results.percall`, as ``recommend`` ranks them)
    per_call: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, objective: Objective, *, full_bytes: int = 0, per_call: Collection[str] = ()
    ) -> Goal:
        """The goal of a resolved :class:`~iotune.model.objective.Objective` (its weights set)."""
        if objective.weights is None:
            raise ValueError("Goal.of: resolve the objective against the metrics first")
        return cls(
            dict(objective.weights),
            objective.limits,
            full_bytes=full_bytes,
            per_call=frozenset(per_call),
        )

    def full_size(self, result: TrialResult) -> float:
        """What ``result``'s configuration stores at full size (its own size when full)."""
        stored = float(result.file_bytes or 0)
        if self.full_bytes and result.raw_bytes and result.raw_bytes != self.full_bytes:
            return stored * self.full_bytes / result.raw_bytes
        return stored

    def over_size(self, result: TrialResult) -> float:
        """Bytes ``result``'s configuration stores at full size beyond ``max_size`` (> 0:
        infeasible, what the sampler's constraint is told); 0 without the limit."""
        if "max_size" in self.limits and result.file_bytes is not None:
            return float(self.full_size(result) - self.limits["max_size"])
        return 0.0

    def repeat_scores(self, results: list[TrialResult]) -> np.ndarray:
        """Log score of each repeat of ``results``, pooled; empty if a metric is missing."""
        pooled: dict[str, list[float]] = {m: [] for m in self.weights}
        for result in results:
            found = series(result, self.per_call)
            if any(not found.get(m) for m in self.weights):
                return np.array([])
            n = min(len(found[m]) for m in self.weights)
            for m in self.weights:
                pooled[m] += found[m][:n]
        total = sum(self.weights.values())
        logs = sum(w * np.log(np.maximum(pooled[m], 1e-300)) for m, w in self.weights.items())
        return np.asarray(logs, dtype=float) / total

    def score(self, results: list[TrialResult]) -> float:
        """Log of the weighted geometric mean of each metric's pooled median; NaN without."""
        total, logs = sum(self.weights.values()), 0.0
        for metric, weight in self.weights.items():
            values = [v for r in results for v in series(r, self.per_call).get(metric, [])]
            values = [v for v in values if not math.isnan(v)]
            if not values:
                return math.nan
            logs += weight * math.log(max(float(np.median(values)), 1e-300))
        return logs / total

    def unreadable(self, visit: Visit) -> bool:
        """Whether a reader the limits name opens ``visit``'s codec only with a plugin.

        Its format's backend says (:func:`iotune.backends.readability`), as
        ``recommend`` asks it (:mod:`iotune.results.portable`).
        """
        if not self.limits.get("readers"):
            return False
        from iotune.backends import readability

        settings = {"backend": visit.trial.backend, **visit.trial.params}
        return readability(settings).blocks(self.limits["readers"])

    def feasible(self, visit: Visit, best_ratio: float) -> bool:
        """Within ``max_size``, ``max_ratio_loss`` (against the best ratio seen) and
        ``readers``."""
        ok = visit.ok
        if not ok or self.unreadable(visit):
            return False
        stored = self.full_size(ok[0])
        if "max_size" in self.limits and stored > self.limits["max_size"]:
            return False
        if not lossless_or_within(errors_of_result(ok[0]), self.limits):
            return False
        if "max_ratio_loss" in self.limits and ok[0].file_bytes:
            ratio = ok[0].raw_bytes / ok[0].file_bytes
            return ratio >= (1 - self.limits["max_ratio_loss"]) * best_ratio - 1e-12
        return True


class State:
    """Every visit of a search, by trial id, in the order first visited."""

    def __init__(self, goal: Goal, *, top: float | None = None) -> None:
        self.goal = goal
        #: the fidelity a pick must be measured at (None: no rungs)
        self.top = top
        self.visits: dict[str, Visit] = {}

    def visit(self, coords: dict[str, Any], trial: Trial) -> Visit:
        if trial.id not in self.visits:
            self.visits[trial.id] = Visit(len(self.visits), dict(coords), trial)
        return self.visits[trial.id]

    def _best_ratio(self) -> float:
        # among what may be picked: a quantised visit beyond the error limit, or one the
        # named readers need a plugin for, sets no bar (recommend drops those first too)
        ratios = [
            v.ok[0].raw_bytes / (v.ok[0].file_bytes or 1)
            for v in self.visits.values()
            if _sized(v)
            and lossless_or_within(errors_of_result(v.ok[0]), self.goal.limits)
            and not self.goal.unreadable(v)
        ]
        return max(ratios, default=0.0)

    def ranked(self, fidelity: float | None = None) -> list[tuple[float, Visit]]:
        """Feasible visits with a score at ``fidelity`` (default: the top), best first."""
        at = self.top if fidelity is None else fidelity
        best_ratio = self._best_ratio()
        found = []
        for visit in self.visits.values():
            if visit.fidelity != at:
                continue
            if self.goal.feasible(visit, best_ratio):
                value = self.goal.score(visit.ok)
                if not math.isnan(value):
                    found.append((value, visit))
        return sorted(found, key=lambda sv: (-sv[0], sv[1].index))

    def leader(self) -> Visit | None:
        """The best pooled score among the most-confirmed visits (up to :data:`CONFIRM`)."""
        ranked = self.ranked()
        if not ranked:
            return None
        need = min(CONFIRM, max(v.measured for _s, v in ranked))
        return next(v for _s, v in ranked if v.measured >= need)

    def reference(self, fidelity: float | None) -> tuple[float, ...] | None:
        """The log score of each repeat of the best visit at ``fidelity``: what an early
        stop compares a trial at that fidelity with.  None before that visit has the
        repeats the comparison trusts alone (:data:`~iotune.measuring.ratio.MIN_REPEATS`).
        """
        ranked = self.ranked(fidelity)
        if not ranked:
            return None
        mine = self.goal.repeat_scores(ranked[0][1].ok)
        mine = mine[np.isfinite(mine)]
        return tuple(float(v) for v in mine) if mine.size >= MIN_REPEATS else None

    def to_remeasure(self, k: int) -> list[Visit]:
        """Up to ``k`` visits to measure again so the pick is sure beyond noise.

        The best pooled score first while it has fewer than :data:`CONFIRM`
        measurements (one lucky trial must not win); then, best first, the
        contenders the repeats cannot tell from the leader (the interval of their
        ratio holds 1, :func:`tied`: ``recommend``'s tie),
        until they too have :data:`CONFIRM`.  A
        near tie among confirmed visits is left alone: either is a good pick.
        Empty when the race is settled.
        """
        ranked = self.ranked()
        if not ranked:
            return []
        top = ranked[0][1]
        if top.measured < CONFIRM:
            return [top]
        mine = self.goal.repeat_scores(top.ok)
        picks: list[Visit] = []
        for _score, other in ranked[1:]:
            if len(picks) == k:
                break
            if other.measured >= CONFIRM:
                continue
            theirs = self.goal.repeat_scores(other.ok)
            if not theirs.size or tied(theirs, mine):
                picks.append(other)
        return picks


def tied(point: np.ndarray, reference: np.ndarray) -> bool:
    """Whether per-repeat log scores ``point`` cannot be told from ``reference``'s: the
    interval of the ratio of their scores' medians holds 1 (``recommend``'s tie,
    :func:`iotune.measuring.ratio.gap_of`; a search has no noise floor)."""
    # log scores: their exponent is the score the ratio of medians compares
    return gap_of(np.exp(point), np.exp(reference)).tied


def _sized(visit: Visit) -> bool:
    ok = visit.ok
    return bool(ok) and bool(ok[0].file_bytes) and bool(ok[0].raw_bytes)
