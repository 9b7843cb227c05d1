"""What a search may spend: trials, or time on the machine.

``search.budget`` counts trials (re-measurements included), or a share of the
space's applicable points, or, given as a time (``30min``, ``2h``), the sum of
the trials' measured wall times: each trial's writes, reads, launches and
repeats, as :attr:`~iotune.model.records.TrialResult.seconds` says.  A replayed
search is charged the time its grid recorded for that configuration at that
fidelity, so strategies are compared by time, offline.

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


class Spent(Protocol):
    """A trial of the search: its cost once measured."""

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
        return "trials" if self.trials is not None else "s"

    def used(self, steps: Sequence[Spent]) -> float:
        """What ``steps`` cost in the budget's unit."""
        if self.trials is not None:
            return float(len(steps))
        return sum(s.seconds for s in steps)

    def done(self, steps: Sequence[Spent]) -> bool:
        return self.used(steps) >= self.total

    def explore_slots(self, steps: Sequence[Spent], k: int) -> int:
        """How many of ``k`` new trials may explore (the rest of the budget is the race's)."""
        reserve = math.ceil(self.remeasure * self.total) if self.trials is not None else 0.0
        if self.trials is not None:
            return max(0, min(k, self.trials - int(reserve) - len(steps)))
        room = (1 - self.remeasure) * self.total - self.used(steps)
        return k if room > 0 else 0

    def room_after(self, steps: Sequence[Spent], k: int, confirm: float) -> int:
        """New trials that still leave room for ``confirm`` more (in trials or seconds)."""
        left = self.total - self.used(steps)
        if self.trials is not None:
            return min(k, max(0, int(left - confirm)))
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
