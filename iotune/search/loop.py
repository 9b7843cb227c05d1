"""The search loop: ask a batch, measure it, tell the sampler, re-measure the leaders.

Budget: every trial dispatched counts, re-measurements included.  The search
explores (the strategy's sampler proposes new configurations) until only
``remeasure`` of the budget is left, then races: the best pooled score is
measured again until it has :data:`~iotune.search.state.CONFIRM` measurements
and its repeats beat every other configuration's beyond noise (one-sided
Mann-Whitney), or the budget is gone.  A race settled early gives its budget
back to exploring.  The recommendation is the best pooled score among the
most-confirmed configurations, never a single lucky trial.

Trials go to a *measurer* (:class:`Measurer`): the executors, or a recorded grid
(:mod:`iotune.search.replay`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from iotune.model.records import Trial, TrialResult, TrialTask
from iotune.model.spec import SearchSpec, Sweep
from iotune.search.space import Resolved, Space
from iotune.search.state import CONFIRM, Goal, State, Visit
from iotune.search.strategies import Proposer


class Measurer(Protocol):
    def measure(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        """Run ``tasks``; yield each result (in any order) as it is final."""


@dataclass
class Step:
    """One trial of the search, in the order asked."""

    id: str
    visit: Visit
    kind: str  # explore | remeasure
    handle: Any = None  # the sampler's trial
    score: float = math.nan  # this trial's own log score
    leader: int = -1  # the visit leading once this trial was told


@dataclass
class Outcome:
    """What a search did: its visits, its trials in order, and its pick."""

    search: SearchSpec
    budget: int
    space_size: int
    applicable: int
    state: State
    steps: list[Step] = field(default_factory=list)

    @property
    def recommended(self) -> Visit | None:
        return self.state.leader()


def resolve_budget(search: SearchSpec, applicable: int) -> int:
    """Trials the search may run: the budget, a share of the applicable points, or all."""
    if search.budget is not None:
        return search.budget
    if search.budget_fraction is not None:
        return max(2, math.ceil(search.budget_fraction * applicable))
    return applicable


class Search:
    """One adaptive search over ``sweep`` (its ``search`` section), measured by ``measurer``.

    Parameters
    ----------
    goal
        The objective as weights and limits.
    task
        Builds the task that measures a trial (workload, reads, scratch...).
    log
        Called with each asked trial's record before it runs (the search log).
    earlier
        An earlier run's log records and journal results, to resume from.
    """

    def __init__(
        self,
        sweep: Sweep,
        *,
        goal: Goal,
        measurer: Measurer,
        task: Callable[[Trial], TrialTask],
        parallel: int = 1,
        log: Callable[[dict[str, Any]], None] | None = None,
        earlier: tuple[list[dict[str, Any]], Mapping[str, TrialResult]] = ([], {}),
    ) -> None:
        assert sweep.search is not None
        self.space = Space(sweep)
        applicable = self.space.applicable_estimate(seed=sweep.search.seed)
        budget = resolve_budget(sweep.search, applicable)
        self.out = Outcome(sweep.search, budget, self.space.size, applicable, State(goal))
        self.proposer = Proposer(
            sweep.search.strategy, seed=sweep.search.seed, budget=budget, space=self.space
        )
        self.rng = np.random.default_rng(sweep.search.seed)
        self.measurer, self.task, self.log = measurer, task, log
        self.parallel = max(1, parallel)
        self.reserve = math.ceil(sweep.search.remeasure * budget)
        self.exhausted = False
        self._earlier = earlier

    def run(self) -> Outcome:
        """Spend the budget; return what was measured and the pick."""
        pending = self._resume(*self._earlier)
        while pending:
            self._measure(pending[: self.parallel])
            pending = pending[self.parallel :]
        while len(self.out.steps) < self.out.budget:
            batch = self._next_batch(min(self.parallel, self.out.budget - len(self.out.steps)))
            if not batch:
                break
            for step in batch:
                self._record(step)
            self._measure(batch)
        return self.out

    # --- choosing trials ----------------------------------------------------------

    def _next_batch(self, k: int) -> list[Step]:
        explore = max(0, self.out.budget - self.reserve - len(self.out.steps))
        steps: list[Step] = []
        self._fill(steps, min(k, explore))
        if len(steps) < k:
            chosen = {s.visit.trial.id for s in steps}
            picks = [v for v in self.out.state.to_remeasure(k) if v.trial.id not in chosen]
            steps += [self._step(v, "remeasure") for v in picks[: k - len(steps)]]
        if not steps:  # the race is settled: explore, keeping room to confirm a new leader
            left = self.out.budget - len(self.out.steps)
            room = min(k, max(0, left - (CONFIRM - 1))) if self.reserve else k
            self._fill(steps, room)
        if not steps and self.reserve:  # no room to explore: confirm the leader further
            leader = self.out.state.leader()
            steps = [self._step(leader, "remeasure")] if leader is not None else []
        return steps

    def _fill(self, steps: list[Step], k: int) -> None:
        while len(steps) < k and not self.exhausted:
            step = self._explore({s.visit.trial.id for s in steps})
            if step is None:
                return
            steps.append(step)

    def _explore(self, batch: set[str]) -> Step | None:
        skip = set(self.out.state.visits) | batch
        asked = self.proposer.ask(skip)
        handle = None
        if asked is None:
            found = self._draw(skip)
            if found is None:
                self.exhausted = True
                return None
        else:
            found, handle = asked
        step = self._step(self.out.state.visit(found.coords, found.trial), "explore")
        step.handle = handle
        return step

    def _draw(self, skip: set[str]) -> Resolved | None:
        """A random applicable point not yet measured, or None when there is none."""
        if self.space.size <= 10_000:
            fresh = [r for r in map(self.space.resolve, self.space.iterate()) if _new(r, skip)]
            pick = fresh[int(self.rng.integers(len(fresh)))] if fresh else None
            return pick if isinstance(pick, Resolved) else None
        for _ in range(1000):
            found = self.space.resolve(self.space.random_point(self.rng))
            if isinstance(found, Resolved) and _new(found, skip):
                return found
        return None

    def _step(self, visit: Visit, kind: str) -> Step:
        taken = sum(1 for s in self.out.steps if s.visit is visit)
        return Step(visit.trial.id if not taken else f"{visit.trial.id}.{taken + 1}", visit, kind)

    def _record(self, step: Step) -> None:
        self.out.steps.append(step)
        if self.log is not None:
            self.log({"id": step.id, "kind": step.kind, "coords": step.visit.coords})

    # --- measuring and telling ---------------------------------------------------

    def _measure(self, steps: list[Step]) -> None:
        by_id = {s.id: s for s in steps}
        tasks = [self.task(dataclasses.replace(s.visit.trial, id=s.id)) for s in steps]
        for result in self.measurer.measure(tasks):
            self._tell(by_id[result.id], result)

    def _tell(self, step: Step, result: TrialResult) -> None:
        goal = self.out.state.goal
        step.visit.results.append(result)
        step.score = goal.score([result]) if result.status == "ok" else math.nan
        over = 0.0
        if "max_size" in goal.limits and result.file_bytes is not None:
            over = float(result.file_bytes - goal.limits["max_size"])
        if step.kind == "explore":
            if step.handle is not None:
                self.proposer.tell(step.handle, step.score, over_size=over)
            else:
                self.proposer.add(step.visit.coords, step.score, over_size=over)
        leader = self.out.state.leader()
        step.leader = -1 if leader is None else leader.index

    def _resume(self, records: list[dict[str, Any]], done: Mapping[str, TrialResult]) -> list[Step]:
        """Take an earlier run's trials from its log: finished ones told, the rest to rerun."""
        pending = []
        for record in records:
            found = self.space.resolve(record["coords"])
            if isinstance(found, str):
                continue  # the space changed under the log; the journal's digest forbids it
            visit = self.out.state.visit(found.coords, found.trial)
            step = Step(record["id"], visit, record["kind"])
            self.out.steps.append(step)
            if record["id"] in done:
                self._tell(step, done[record["id"]])
            else:
                pending.append(step)
        return pending


def _new(found: Resolved | str, skip: set[str]) -> bool:
    return not isinstance(found, str) and found.trial.id not in skip
