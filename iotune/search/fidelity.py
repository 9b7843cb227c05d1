"""Multi-fidelity rungs: cheap trials first, the best taken to full size.

A sweep that lists ``fidelity: [0.125, 0.5, 1]`` gives the search rungs.  New
configurations are measured at the lowest rung (the *entry*) while the budget
allows; what is left once only the climb's reserve remains (:data:`CLIMB`
configurations at full size plus a confirmation) goes to taking the best of the
entry rung to full size, best first, and racing them there (successive halving
in its budget-aware form, one bracket: with a small budget every cheap trial
explores, rather than spending it on intermediate rungs whose ranking the
lowest one already gives).  Only full-size measurements are ever recommended.

Low fidelity is trusted only as far as it ranks like full size: whenever a
configuration is measured at full size, the ladder computes Spearman's rank
correlation between the entry rung's scores and the full-size ones over the
configurations measured at both (the controls give it a spread: the cheap
rung's best alone are too alike to rank).  With at least :data:`MIN_PAIRS` pairs and a
correlation below :data:`MIN_RHO`, the entry moves up one rung (to full size
when there is no rung between), the sampler relearns from that rung only, and
the search says so.  With fewer pairs the correlation is reported, unjudged.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iotune.search.state import State, Visit, tied

logger = logging.getLogger(__name__)

#: configurations the climb takes to full size before racing them
CLIMB = 2
#: a full-size trial's cost before one is measured: the entry rung's times the workload's
#: growth times this (a trial's fixed costs do not grow: on the recorded grids 0.6-0.75)
TOP_SCALE = 0.75
#: pairs (the entry rung's score, the full-size score) before the correlation is judged
MIN_PAIRS = 6
#: controls among them (the cheap rung's best alone are too alike to rank)
MIN_CONTROLS = 2
#: below this Spearman correlation a rung is not trusted
MIN_RHO = 0.1


@dataclass
class Ladder:
    """The rungs of a search (one rung: no multi-fidelity) and what they showed."""

    rungs: tuple[float | None, ...]
    #: the rung new configurations are measured at (an index of ``rungs``)
    level: int = 0
    #: why a rung was dropped ('' while the lowest is trusted)
    fallback: str = ""
    #: trials asked before the last rung was dropped (-1: none was)
    dropped_at: int = -1
    #: Spearman correlation with full size per lower rung: (rho, pairs)
    correlation: dict[float, tuple[float, int]] = field(default_factory=dict)

    @property
    def top(self) -> float | None:
        return self.rungs[-1]

    @property
    def multi(self) -> bool:
        """Whether new configurations start below full size."""
        return self.level < len(self.rungs) - 1

    @property
    def entry(self) -> float | None:
        """The fidelity a new configuration is measured at."""
        return self.rungs[self.level]

    def top_cost(self, steps: Sequence[Any]) -> float:
        """A full-size trial's typical wall time: measured, else scaled up from the entry
        rung's trials that ran every repeat (an early stop is not a typical cost)."""
        for rung in (self.top, self.entry):
            costs = [
                s.seconds
                for s in steps
                if s.result and s.visit.fidelity == rung and s.result.stop != "stopped_early"
            ]
            if costs:
                scale = 1.0 if rung == self.top else TOP_SCALE * (self.top or 1) / (rung or 1)
                return float(np.mean(costs)) * scale
        return 0.0

    def promotions(self, state: State, taken: set[tuple]) -> list[tuple[Visit, float, bool]]:
        """The entry rung's configurations not yet at full size, best first, each with
        whether the entry rung cannot tell it from its best (the interval of the ratio
        of their repeats' medians holds 1: ``recommend``'s tie, :func:`tied`)."""
        if not self.multi:
            return []
        ranked = state.ranked(self.entry)
        if not ranked:
            return []
        best = state.goal.repeat_scores(ranked[0][1].ok)
        found = []
        for _score, visit in ranked:
            if (visit.config, self.top) in taken or _stopped(visit):
                continue
            theirs = state.goal.repeat_scores(visit.ok)
            near = visit is ranked[0][1] or not theirs.size or tied(theirs, best)
            found.append((visit, float(self.top), near))  # type: ignore[arg-type]
        return found

    def check(self, state: State, controls: set[tuple]) -> str:
        """Judge the entry rung against full size; a message when it is dropped.

        ``controls`` are the configurations taken to full size as controls: the
        rung is judged once :data:`MIN_PAIRS` pairs include :data:`MIN_CONTROLS`.
        """
        if not self.multi:
            return ""
        goal, rung = state.goal, self.entry
        full = {v.config: goal.score(v.ok) for _s, v in state.ranked(self.top)}
        both = [(s, v) for s, v in state.ranked(rung) if v.config in full]
        pairs = [(s, full[v.config]) for s, v in both]
        if len(pairs) < 2:
            return ""
        rho = spearman([p[0] for p in pairs], [p[1] for p in pairs])
        self.correlation[float(rung)] = (rho, len(pairs))  # type: ignore[arg-type]
        judged = sum(1 for _s, v in both if v.config in controls)
        if len(pairs) < MIN_PAIRS or judged < MIN_CONTROLS or not rho < MIN_RHO:
            return ""
        self.level += 1
        then = f"fidelity {self.entry:g}" if self.multi else "full size"
        message = (
            f"fidelity {rung:g} ranks unlike full size (Spearman {rho:.2f} over {len(pairs)} "
            f"configurations measured at both): measuring new configurations at {then} from here"
        )
        self.fallback = "; ".join(filter(None, [self.fallback, message]))
        logger.warning("%s", message)
        return message


def _stopped(visit: Visit) -> bool:
    """Stopped early: hopeless beyond noise at its rung, so not worth full size."""
    return any(r.stop == "stopped_early" for r in visit.results)


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rank correlation (average ranks for ties); NaN without spread."""
    rx, ry = _ranks(x), _ranks(y)
    if np.std(rx) == 0 or np.std(ry) == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _ranks(values: list[float]) -> np.ndarray:
    """1-based ranks, ties sharing their average rank."""
    data = np.asarray(values, dtype=float)
    order = np.argsort(data, kind="mergesort")
    ranks = np.empty(len(data))
    ranks[order] = np.arange(1, len(data) + 1)
    for value in np.unique(data):
        same = data == value
        ranks[same] = ranks[same].mean()
    return ranks
