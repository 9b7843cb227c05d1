"""What a search may spend: trials, or time on the machine.

``search.budget`` counts full-size trials (re-measurements included), or a share
of the space's applicable points, or, given as a time (``30min``, ``2h``), the
sum of the trials' measured wall times: each trial's writes, reads, launches and
repeats, as :attr:`~iotune.model.records.TrialResult.seconds` says.  A replayed
search is charged the time its grid recorded for that configuration at that
fidelity, so strategies are compared by time, offline.

Counted in trials, a budget counts cost, not launches: a trial at fidelity ``f``
(a rung of ``parameters.fidelity``) counts as ``f`` of a full-size trial, its
re-measurements too, so ``budget: 25%`` is a quarter of what measuring every
applicable configuration at full size costs.  A search without rungs counts
every trial as one.  A trial is launched only when its cost fits what is left:
the trials spent never exceed the budget.

A time budget is checked before each batch: a search stops once it has spent
its budget, so it may overrun by the trials of one batch (one trial when run
serially), never more.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from iotune.model.spec import SearchSpec

logger = logging.getLogger(__name__)
#: batches in a row that cost no time before a time-budgeted search gives up
IDLE = 20


#: slack for sums of fractional costs (ten trials at 0.1 make one full-size trial)
EPS = 1e-9


class Spent(Protocol):
    """A trial of the search: its share of a full-size trial, and its time once measured."""

    @property
    def cost(self) -> float: ...

    @property
    def seconds(self) -> float: ...


@dataclass(frozen=True)
class Budget:
    """``trials`` or ``seconds`` (one of them), and the share kept for re-measuring."""

    trials: int | None = None
    seconds: float | None = None
    remeasure: float = 0.1

    @classmethod
    def of(cls, search: SearchSpec, applicable: int) -> Budget:
        """The budget ``search`` gives for a space of ``applicable`` points."""
        if search.budget_seconds is not None:
            return cls(seconds=search.budget_seconds, remeasure=search.remeasure)
        if search.budget is not None:
            trials = search.budget
        elif search.budget_fraction is not None:
            trials = max(2, math.ceil(search.budget_fraction * applicable))
        else:
            trials = applicable
        return cls(trials=trials, remeasure=search.remeasure)

    @property
    def total(self) -> float:
        """The budget in its own unit (trials or seconds)."""
        return float(self.trials if self.trials is not None else self.seconds or 0)

    @property
    def unit(self) -> str:
        """``trials`` (full-size trials: a cheaper one counts as its share) or ``s``."""
        return "trials" if self.trials is not None else "s"

    def used(self, steps: Sequence[Spent]) -> float:
        """What ``steps`` cost in the budget's unit (full-size trials, or seconds)."""
        if self.trials is not None:
            return round(math.fsum(s.cost for s in steps), 9)
        return sum(s.seconds for s in steps)

    def done(self, steps: Sequence[Spent]) -> bool:
        return self.used(steps) >= self.total - EPS

    def launches_left(self, steps: Sequence[Spent], cost: float, k: int) -> int:
        """Of ``k`` trials of ``cost`` each, how many still fit a trial budget (all ``k`` on
        a time budget, which is checked before each batch)."""
        if self.trials is None:
            return k
        return max(0, min(k, math.floor((self.total - self.used(steps)) / cost + EPS)))

    def affordable(self, steps: Sequence[Spent], batch: Sequence[Spent]) -> int:
        """How many of ``batch``, in order, fit what a trial budget has left after ``steps``
        (all of it on a time budget, which may overrun by one batch)."""
        if self.trials is None:
            return len(batch)
        left, fit = self.total - self.used(steps), 0
        for step in batch:
            left -= step.cost
            if left < -EPS:
                break
            fit += 1
        return fit

    def explore_slots(self, steps: Sequence[Spent], k: int) -> int:
        """How many of ``k`` new full-size trials may explore (the rest is the race's)."""
        if self.trials is not None:
            reserve = math.ceil(self.remeasure * self.total)
            return max(0, min(k, math.floor(self.trials - reserve - self.used(steps) + EPS)))
        room = (1 - self.remeasure) * self.total - self.used(steps)
        return k if room > 0 else 0

    def room_after(self, steps: Sequence[Spent], k: int, confirm: float) -> int:
        """New full-size trials that still leave room for ``confirm`` more (in trials or
        seconds)."""
        left = self.total - self.used(steps)
        if self.trials is not None:
            return min(k, max(0, math.floor(left - confirm + EPS)))
        return k if left > confirm else 0


class Idle:
    """Notices a time budget that would never be spent: :data:`IDLE` batches in a row
    that cost nothing (every trial failing at once)."""

    def __init__(self, budget: Budget) -> None:
        self.budget, self.free = budget, 0

    def after(self, batch: Sequence[Spent]) -> bool:
        """Whether the search should end after ``batch`` (and it says why)."""
        if self.budget.seconds is None or any(s.seconds > 0 for s in batch):
            self.free = 0
            return False
        self.free += 1
        if self.free < IDLE:
            return False
        logger.warning("search: %d batches cost no time (every trial failing): stopping", IDLE)
        return True
