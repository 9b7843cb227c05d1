"""Multi-fidelity rungs: cheap trials first, the best promoted to full size.

A sweep that lists ``fidelity: [0.125, 0.5, 1]`` gives the search rungs: a new
configuration is measured at the smallest share of the workload, and a
configuration is promoted to the next rung once it is in the best
:data:`ETA`-th of the configurations measured at its rung (asynchronous
successive halving, as ASHA and Hyperband's brackets do), best first.  Only
full-size measurements are ever recommended.

Low fidelity is trusted only as far as it ranks like full size: each time a
configuration reaches full size the ladder computes Spearman's rank
correlation, over the configurations measured at both, between each lower
rung's scores and the full-size ones.  With at least :data:`MIN_PAIRS` pairs
and a correlation below :data:`MIN_RHO` the ladder falls back: from then on
new configurations are measured at full size only, and the search says so.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

import numpy as np

from iotune.search.state import State, Visit

logger = logging.getLogger(__name__)

#: a configuration is promoted when it is in the best 1/ETA of its rung
ETA = 3
#: pairs (a lower rung's score, the full-size score) before the correlation is judged
MIN_PAIRS = 5
#: below this Spearman correlation low fidelity is not trusted
MIN_RHO = 0.3


@dataclass
class Ladder:
    """The rungs of a search (one rung: no multi-fidelity) and what they showed."""

    rungs: tuple[float | None, ...]
    eta: int = ETA
    #: why low fidelity was dropped ('' while it is trusted)
    fallback: str = ""
    #: Spearman correlation with full size per lower rung: (rho, pairs)
    correlation: dict[float, tuple[float, int]] = field(default_factory=dict)

    @property
    def top(self) -> float | None:
        return self.rungs[-1]

    @property
    def multi(self) -> bool:
        """Whether new configurations start below full size."""
        return len(self.rungs) > 1 and not self.fallback

    @property
    def entry(self) -> float | None:
        """The fidelity a new configuration is measured at."""
        return self.rungs[0] if self.multi else self.top

    def promotions(self, state: State, taken: set[tuple]) -> list[tuple[Visit, float]]:
        """Configurations due at the next rung, highest rung first, best first.

        ``taken`` holds configurations already measured (or asked) at the rung
        they would be promoted to.
        """
        if len(self.rungs) < 2:
            return []
        found: list[tuple[Visit, float]] = []
        for k in range(len(self.rungs) - 2, -1, -1):
            at, up = self.rungs[k], self.rungs[k + 1]
            ranked = state.ranked(at)
            quota = len(ranked) // self.eta
            for _score, visit in ranked[:quota]:
                if (visit.config, up) not in taken:
                    found.append((visit, float(up)))  # type: ignore[arg-type]
        return found

    def best_below(self, state: State, taken: set[tuple]) -> tuple[Visit, float] | None:
        """The best configuration not yet at full size, from the highest rung that has one."""
        for k in range(len(self.rungs) - 2, -1, -1):
            for _score, visit in state.ranked(self.rungs[k]):
                if (visit.config, self.top) not in taken:
                    return visit, float(self.top)  # type: ignore[arg-type]
        return None

    def check(self, state: State) -> str:
        """Judge each lower rung against full size; a message when low fidelity is dropped."""
        if self.fallback or len(self.rungs) < 2:
            return ""
        goal = state.goal
        full = {v.config: goal.score(v.ok) for _s, v in state.ranked(self.top)}
        for rung in self.rungs[:-1]:
            pairs = [(s, full[v.config]) for s, v in state.ranked(rung) if v.config in full]
            if len(pairs) < 2:
                continue
            rho = spearman([p[0] for p in pairs], [p[1] for p in pairs])
            self.correlation[float(rung)] = (rho, len(pairs))  # type: ignore[arg-type]
            if len(pairs) >= MIN_PAIRS and rho < MIN_RHO:
                self.fallback = (
                    f"fidelity {rung:g} ranks unlike full size (Spearman {rho:.2f} over "
                    f"{len(pairs)} configurations measured at both): measuring new "
                    "configurations at full size from here"
                )
                logger.warning("%s", self.fallback)
                return self.fallback
        return ""


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
