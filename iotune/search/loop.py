"""The search loop: ask a batch, measure it, tell the sampler and the policies.

Budget (:mod:`iotune.search.budget`): full-size trials, re-measurements
included (a trial at fidelity ``f`` counts as ``f``), or their wall time.  The
loop proposes new configurations (the focus parameters first, then the
strategy's sampler, :mod:`iotune.search.strategies`), measures each batch and
tells the sampler; what else is measured, and when, is its policies'
(:mod:`iotune.search.policy`): fidelity rungs
(:mod:`~iotune.search.rungs`), the warm start (:mod:`~iotune.search.warm_start`),
early stops (:mod:`~iotune.search.early_stop`) and racing the leaders
(:mod:`~iotune.search.racing`).  The recommendation is the best pooled score
among the most-confirmed configurations, never a single lucky trial.

Trials go to a *measurer* (:class:`Measurer`): the executors, or a recorded grid
(:mod:`iotune.search.replay`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from iotune.model.records import Trial, TrialResult, TrialTask
from iotune.model.spec import Sweep
from iotune.search.budget import Budget, Idle
from iotune.search.early_stop import EarlyStopping
from iotune.search.fidelity import Ladder
from iotune.search.outcome import Outcome, Step
from iotune.search.policy import Policy
from iotune.search.prior import Prior
from iotune.search.racing import Racing
from iotune.search.rungs import Rungs
from iotune.search.space import Resolved, Space
from iotune.search.state import Goal, State, Visit
from iotune.search.strategies import Proposer
from iotune.search.warm_start import WarmStart


class Measurer(Protocol):
    def measure(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        """Run ``tasks``; yield each result (in any order) as it is final."""


def policies_for(sweep: Sweep, prior: Sequence[Prior] = ()) -> list[Policy]:
    """The policies of a search of ``sweep``, in the order the loop calls them.

    Each decides for itself whether it applies (rungs only while the ladder has
    a rung below full size, the warm start only with a prior, early stops as
    ``search.early_stop`` and the repeats say); racing chooses the batches the
    rungs leave.
    """
    return [Rungs(), WarmStart(prior), EarlyStopping.of(sweep), Racing()]


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
    prior
        Earlier results (``search.prior``), scored on their own scales.
    policies
        What the search does besides sampling (default: :func:`policies_for`
        ``sweep`` and ``prior``; given, ``prior`` is not used).
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
        prior: Sequence[Prior] = (),
        policies: Sequence[Policy] | None = None,
    ) -> None:
        assert sweep.search is not None
        search = sweep.search
        self.space = Space(sweep)
        applicable = self.space.applicable_estimate(seed=search.seed)
        budget = Budget.of(search, applicable)
        ladder = Ladder(self.space.rungs or (None,))
        state = State(goal, top=self.space.top)
        self.out = Outcome(search, budget, self.space.size, applicable, state, ladder)
        guess = _launches(budget, ladder, applicable)
        self.proposer = Proposer(search.strategy, seed=search.seed, budget=guess, space=self.space)
        self.rng = np.random.default_rng(search.seed)
        self.measurer, self.task, self.log = measurer, task, log
        self.parallel = max(1, parallel)
        self.exhausted = False
        self.focus = self.space.held_for(sweep.search.focus)
        self.policies = list(policies) if policies is not None else policies_for(sweep, prior)
        self.out.policies = tuple(self.policies)
        self._idle = Idle(budget)
        self._earlier = earlier
        for policy in self.policies:
            policy.start(self)

    def run(self) -> Outcome:
        """Spend the budget; return what was measured and the pick."""
        pending = self._resume(*self._earlier)
        while pending:
            self._measure(pending[: self.parallel])
            pending = pending[self.parallel :]
        while not self.out.limit.done(self.out.steps):
            for policy in self.policies:
                policy.before_batch(self)
            limit, steps = self.out.limit, self.out.steps
            k = limit.launches_left(steps, _cost(self.out.ladder.entry), self.parallel)
            batch = self._next_batch(k) if k else []
            batch = batch[: limit.affordable(steps, batch)]  # a full-size trial may not fit
            if not batch:
                break
            for step in batch:
                self._record(step)
            self._measure(batch)
            if self._idle.after(batch):
                break
        return self.out

    # --- choosing trials ----------------------------------------------------------

    def _next_batch(self, k: int) -> list[Step]:
        """The first policy's batch; with none, new configurations only."""
        for policy in self.policies:
            batch = policy.plan(self, k)
            if batch is not None:
                return batch
        return self.fill([], k)

    def fill(self, steps: list[Step], k: int) -> list[Step]:
        """``steps`` filled up to ``k``: what the policies propose, then what the sampler asks."""
        for policy in self.policies:
            while len(steps) < k and (step := policy.propose(self)) is not None:
                steps.append(step)
        while len(steps) < k and not self.exhausted:
            step = self._explore({s.visit.trial.id for s in steps})
            if step is None:
                break
            steps.append(step)
        return steps

    def remeasure(self, steps: list[Step], k: int) -> list[Step]:
        """What the policies would measure again, up to ``k`` with ``steps``."""
        found: list[Step] = []
        for policy in self.policies:
            found += policy.remeasure(self, [*steps, *found], k)
        return found

    def confirm(self) -> list[Step]:
        """The first policy's trials for when nothing else is left (may be none)."""
        for policy in self.policies:
            steps = policy.confirm(self)
            if steps:
                return steps
        return []

    def _explore(self, batch: set[str]) -> Step | None:
        skip = set(self.out.state.visits) | batch
        explored = sum(1 for s in self.out.steps if s.kind == "explore")
        fixed = self.focus if explored < self.focus_trials else None
        asked = self.proposer.ask(skip, at=self.out.ladder.entry, fixed=fixed)
        handle = None
        if asked is None:  # the sampler keeps proposing what was measured
            found = self._stalled(skip) or self._draw(skip)
            if found is None:
                self.exhausted = True
                return None
        else:
            found, handle = asked
        step = self.step(self.out.state.visit(found.coords, found.trial), "explore")
        step.handle = handle
        return step

    def _stalled(self, skip: set[str]) -> Resolved | None:
        for policy in self.policies:
            found = policy.propose_stalled(self, skip)
            if found is not None:
                return found
        return None

    @property
    def focus_trials(self) -> int:
        """Explorations that vary only the focus parameters (a Darshan study's findings)."""
        if not self.focus:
            return 0
        combos = math.prod(len(d.labels) for d in self.space.dims if d.name not in self.focus)
        return min(self.proposer.startup, combos)

    def _draw(self, skip: set[str]) -> Resolved | None:
        """A random applicable point not yet measured, or None when there is none."""
        at = {"fidelity": self.out.ladder.entry} if self.space.rungs else {}
        if self.space.size <= 10_000:
            points = (self.space.resolve({**p, **at}) for p in self.space.iterate())
            fresh = [r for r in points if _new(r, skip)]
            pick = fresh[int(self.rng.integers(len(fresh)))] if fresh else None
            return pick if isinstance(pick, Resolved) else None
        for _ in range(1000):
            found = self.space.resolve({**self.space.random_point(self.rng), **at})
            if isinstance(found, Resolved) and _new(found, skip):
                return found
        return None

    def step(self, visit: Visit, kind: str) -> Step:
        """A new trial of ``visit`` (its id numbered after the visit's earlier trials)."""
        taken = sum(1 for s in self.out.steps if s.visit is visit)
        return Step(visit.trial.id if not taken else f"{visit.trial.id}.{taken + 1}", visit, kind)

    def _record(self, step: Step) -> None:
        self.out.steps.append(step)
        if self.log is not None:
            self.log({"id": step.id, "kind": step.kind, "coords": step.visit.coords})

    # --- measuring and telling ---------------------------------------------------

    def _measure(self, steps: list[Step]) -> None:
        by_id = {s.id: s for s in steps}
        tasks = [self._task(s) for s in steps]
        for result in self.measurer.measure(tasks):
            self._tell(by_id[result.id], result)

    def _task(self, step: Step) -> TrialTask:
        task = self.task(dataclasses.replace(step.visit.trial, id=step.id))
        for policy in self.policies:
            rule = policy.early_stop(self, step)
            if rule is not None:
                return dataclasses.replace(task, early_stop=rule)
        return task

    def _tell(self, step: Step, result: TrialResult) -> None:
        goal = self.out.state.goal
        step.visit.results.append(result)
        step.result = result
        step.score = goal.score([result]) if result.status == "ok" else math.nan
        if step.kind == "explore":
            over = goal.over_size(result)
            if step.handle is not None:
                self.proposer.tell(step.handle, step.score, over_size=over)
            else:  # drawn, or taken from an earlier run's log
                self.proposer.add(step.visit.coords, step.score, over_size=over)
        for policy in self.policies:
            policy.told(self, step)
        leader = self.out.state.leader()
        step.leader = -1 if leader is None else leader.index

    def entry_scores(self) -> list[tuple[dict[str, Any], float]]:
        """What the sampler should know: every scored visit at the entry fidelity."""
        at = self.out.ladder.entry
        return [
            (v.coords, self.out.state.goal.score(v.ok))
            for v in self.out.state.visits.values()
            if v.ok and v.fidelity == at
        ]

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
            for policy in self.policies:
                policy.resumed(self, step)
            if record["id"] in done:
                self._tell(step, done[record["id"]])
            else:
                pending.append(step)
        return pending


def _cost(fidelity: float | None) -> float:
    """A trial's share of a full-size trial at ``fidelity`` (None: no rungs)."""
    return 1.0 if fidelity is None else fidelity


def _launches(budget: Budget, ladder: Ladder, applicable: int) -> int:
    """The trials a search is expected to launch (its sampler's start-up is a share of
    them): a trial budget's worth at the entry rung, at most every configuration once;
    for a time budget, a fifth of the space (at least 10)."""
    if budget.trials is None:
        return max(10, applicable // 5)
    if not ladder.multi:
        return budget.trials
    return max(budget.trials, min(applicable, math.floor(budget.trials / _cost(ladder.entry))))


def _new(found: Resolved | str, skip: set[str]) -> bool:
    return not isinstance(found, str) and found.trial.id not in skip
