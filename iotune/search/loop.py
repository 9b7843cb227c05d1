"""The search loop: ask a batch, measure it, tell the sampler, re-measure the leaders.

Budget (:mod:`iotune.search.budget`): trials dispatched, re-measurements
included, or their wall time.  Earlier results (``search.prior``) are measured
first and then seed the sampler (:mod:`iotune.search.prior`); with fidelity
rungs new configurations start cheap and the best climb to full size
(:mod:`iotune.search.fidelity`); a trial hopeless beyond noise after its first
repeats stops repeating (``stopped_early``).  The search
explores (the strategy's sampler proposes new configurations, promotions
first) until only ``remeasure`` of the budget is left, then races: the best pooled score is
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
from typing import Any, Protocol

import numpy as np

from iotune.model.records import EarlyStop, Trial, TrialResult, TrialTask
from iotune.model.spec import Sweep
from iotune.search.budget import Budget, Idle
from iotune.search.fidelity import CLIMB, Ladder
from iotune.search.outcome import Outcome, Step
from iotune.search.prior import SEEDS, Prior, PriorPoint, calibrate
from iotune.search.space import Resolved, Space
from iotune.search.state import CONFIRM, Goal, State, Visit
from iotune.search.strategies import Proposer


class Measurer(Protocol):
    def measure(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        """Run ``tasks``; yield each result (in any order) as it is final."""


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
    ) -> None:
        assert sweep.search is not None
        search = sweep.search
        self.space = Space(sweep)
        applicable = self.space.applicable_estimate(seed=search.seed)
        budget = Budget.of(search, applicable)
        ladder = Ladder(self.space.rungs or (None,))
        state = State(goal, top=self.space.top)
        self.out = Outcome(search, budget, self.space.size, applicable, state, ladder)
        guess = budget.trials or max(10, applicable // 5)  # start-up trials for a time budget
        self.proposer = Proposer(search.strategy, seed=search.seed, budget=guess, space=self.space)
        self.rng = np.random.default_rng(search.seed)
        self.measurer, self.task, self.log = measurer, task, log
        self.parallel = max(1, parallel)
        self.exhausted = False
        self.repeats = sweep.measure.repeats if not sweep.measure.adaptive else 0
        self.focus = self.space.held_for(sweep.search.focus)
        self.prior = list(prior)
        # recorded now, so results say where the prior came from even if stopped early
        self.out.prior = calibrate(self.prior, self.out.state, self.out.ladder.entry)
        for record in self.out.prior:
            del record["points"]
        self._ranked_prior: list[dict[str, Any]] = []
        self._unfit: set[tuple] = set()
        self._idle = Idle(budget)
        self._seeds = [p.points[i] for i in range(SEEDS) for p in self.prior if i < len(p.points)]
        self._earlier = earlier

    def run(self) -> Outcome:
        """Spend the budget; return what was measured and the pick."""
        pending = self._resume(*self._earlier)
        while pending:
            self._measure(pending[: self.parallel])
            pending = pending[self.parallel :]
        while not self.out.limit.done(self.out.steps):
            self._reseed()
            k = self.parallel
            if self.out.limit.trials is not None:
                k = min(k, self.out.limit.trials - len(self.out.steps))
            batch = self._next_batch(k)
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
        if self.out.ladder.multi:
            return self._climb(k) if self._climbing() else self._fill([], k) or self._climb(k)
        limit, steps = self.out.limit, list[Step]()
        self._fill(steps, limit.explore_slots(self.out.steps, k))
        if len(steps) < k:
            steps += self._remeasures(steps, k)
        if not steps:  # the race is settled: explore, keeping room to confirm a new leader
            confirm = (CONFIRM - 1) * (self._top_cost() if limit.seconds else 1)
            room = limit.room_after(self.out.steps, k, confirm) if limit.remeasure else k
            self._fill(steps, room)
        if not steps and limit.remeasure:  # no room to explore: confirm the leader further
            steps = self._confirm()
        return steps

    def _confirm(self) -> list[Step]:
        """The leader once more; nothing when a time budget has nothing left to learn
        (every configuration measured, the race settled): the machine's time is kept."""
        leader = self.out.state.leader()
        if leader is None or (self.exhausted and self.out.limit.seconds is not None):
            return []
        return [self._step(leader, "remeasure")]

    def _remeasures(self, steps: list[Step], k: int) -> list[Step]:
        chosen = {s.visit.trial.id for s in steps}
        picks = [v for v in self.out.state.to_remeasure(k) if v.trial.id not in chosen]
        return [self._step(v, "remeasure") for v in picks[: k - len(steps)]]

    def _climbing(self) -> bool:
        """Whether only the climb's reserve is left: the best cheap ones go to full size."""
        limit = self.out.limit
        reserve = CLIMB + CONFIRM - 1
        entry = sum(
            1
            for v in self.out.state.visits.values()
            if v.ok and v.fidelity == self.out.ladder.entry
        )
        if entry < CLIMB and not self.exhausted:  # nothing to choose from yet
            return False
        if limit.trials is not None:
            return len(self.out.steps) >= limit.trials - max(reserve, limit.remeasure * limit.total)
        return self.out.spent >= limit.total - reserve * self._top_cost()

    def _climb(self, k: int) -> list[Step]:
        """Promote the entry rung's best to full size, then its near-ties, racing them."""
        state, ladder, steps = self.out.state, self.out.ladder, list[Step]()
        promotions = ladder.promotions(state, self._taken())
        at_top = {v.config for v in state.visits.values() if v.fidelity == ladder.top}
        while len(steps) < k and promotions and len(at_top) + len(steps) < CLIMB:
            steps += filter(None, [self._promoted(*promotions.pop(0)[:2])])
        limit = self.out.limit
        room = limit.room_after(
            self.out.steps, 1, (CONFIRM - 1) * (self._top_cost() if limit.seconds else 1)
        )
        tied = [p for p in promotions if p[2]]
        while len(steps) < k and tied and room:
            steps += filter(None, [self._promoted(*tied.pop(0)[:2])])
        if len(steps) < k:
            steps += self._remeasures(steps, k)
        rest = [p for p in promotions if not p[2]]
        while len(steps) < k and rest and room:  # the race is settled: one more
            step = self._control(rest) if self._control_due() else self._promoted(*rest.pop(0)[:2])
            steps += filter(None, [step])
        return steps or self._confirm()

    def _control_due(self) -> bool:
        """Every other extra promotion is a control: the climbed configurations are the
        cheap rung's best, too alike for a rank correlation to say anything alone."""
        kinds = [s.kind for s in self.out.steps if s.kind in ("promote", "control")]
        return len(kinds) >= CLIMB and kinds.count("control") * 2 < len(kinds) - CLIMB + 1

    def _control(self, rest: list[tuple[Visit, float, bool]]) -> Step | None:
        """A configuration from the cheap rung's lower half, at random, to full size."""
        lower = rest[len(rest) // 2 :] or rest
        pick = lower[int(self.rng.integers(len(lower)))]
        rest.remove(pick)
        step = self._promoted(*pick[:2])
        if step is not None:
            step.kind = "control"
        return step

    def _fill(self, steps: list[Step], k: int) -> list[Step]:
        """``steps`` filled up to ``k``: the prior's seeds, then what the sampler asks."""
        while len(steps) < k and self._seeds:
            step = self._seeded(self._seeds.pop(0))
            if step is not None:
                steps.append(step)
        while len(steps) < k and not self.exhausted:
            step = self._explore({s.visit.trial.id for s in steps})
            if step is None:
                break
            steps.append(step)
        return steps

    def _taken(self) -> set[tuple]:
        """Each configuration at each fidelity asked so far (or that does not apply)."""
        return {(v.config, v.fidelity) for v in self.out.state.visits.values()} | self._unfit

    def _promoted(self, visit: Visit, fidelity: float) -> Step | None:
        """``visit``'s configuration at ``fidelity``; None where it does not apply there
        (a backend may refuse the full-size workload: then it is never asked again)."""
        found = self.space.resolve({**visit.coords, "fidelity": fidelity})
        if isinstance(found, str):
            self._unfit.add((visit.config, fidelity))
            return None
        return self._step(self.out.state.visit(found.coords, found.trial), "promote")

    def _seeded(self, point: PriorPoint) -> Step | None:
        found = self.space.resolve({**point.coords, "fidelity": self.out.ladder.entry})
        if isinstance(found, str) or found.trial.id in self.out.state.visits:
            return None
        return self._step(self.out.state.visit(found.coords, found.trial), "prior")

    def _explore(self, batch: set[str]) -> Step | None:
        skip = set(self.out.state.visits) | batch
        explored = sum(1 for s in self.out.steps if s.kind == "explore")
        fixed = self.focus if explored < self.focus_trials else None
        asked = self.proposer.ask(skip, at=self.out.ladder.entry, fixed=fixed)
        handle = None
        if asked is None:  # the sampler keeps proposing what was measured
            found = self._next_prior(skip) or self._draw(skip)
            if found is None:
                self.exhausted = True
                return None
        else:
            found, handle = asked
        step = self._step(self.out.state.visit(found.coords, found.trial), "explore")
        step.handle = handle
        return step

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

    def _step(self, visit: Visit, kind: str) -> Step:
        taken = sum(1 for s in self.out.steps if s.visit is visit)
        return Step(visit.trial.id if not taken else f"{visit.trial.id}.{taken + 1}", visit, kind)

    def _record(self, step: Step) -> None:
        self.out.steps.append(step)
        if self.log is not None:
            self.log({"id": step.id, "kind": step.kind, "coords": step.visit.coords})

    def _top_cost(self) -> float:
        return self.out.ladder.top_cost(self.out.steps)

    # --- measuring and telling ---------------------------------------------------

    def _measure(self, steps: list[Step]) -> None:
        by_id = {s.id: s for s in steps}
        tasks = [self._task(s) for s in steps]
        for result in self.measurer.measure(tasks):
            self._tell(by_id[result.id], result)

    def _task(self, step: Step) -> TrialTask:
        task = self.task(dataclasses.replace(step.visit.trial, id=step.id))
        if step.kind == "remeasure" or not self.out.search.early_stop or self.repeats <= 2:
            return task
        bar = self.out.state.stop_bar(step.visit.fidelity)
        if bar is None:
            return task
        weights = tuple(self.out.state.goal.weights.items())
        return dataclasses.replace(task, early_stop=EarlyStop(weights, bar))

    def _tell(self, step: Step, result: TrialResult) -> None:
        goal = self.out.state.goal
        step.visit.results.append(result)
        step.result = result
        step.score = goal.score([result]) if result.status == "ok" else math.nan
        over = 0.0
        if "max_size" in goal.limits and result.file_bytes is not None:
            over = float(goal.full_size(result) - goal.limits["max_size"])
        if step.kind == "explore" and step.handle is not None:
            self.proposer.tell(step.handle, step.score, over_size=over)
        elif step.kind in ("explore", "prior"):
            self.proposer.add(step.visit.coords, step.score, over_size=over)
        at_top = step.visit.fidelity == self.out.state.top
        controls = {s.visit.config for s in self.out.steps if s.kind == "control"}
        if at_top and self.out.ladder.check(self.out.state, controls):  # low fidelity dropped
            self.out.ladder.dropped_at = len(self.out.steps)
            self.exhausted = False  # the configurations are new again at the next rung
            self.proposer.reseed(self._told(), [])  # the sampler learns the new entry only
        leader = self.out.state.leader()
        step.leader = -1 if leader is None else leader.index

    def _told(self) -> list[tuple[dict[str, Any], float]]:
        """What the sampler should know: every scored visit at the entry fidelity."""
        at = self.out.ladder.entry
        return [
            (v.coords, self.out.state.goal.score(v.ok))
            for v in self.out.state.visits.values()
            if v.ok and v.fidelity == at
        ]

    def _reseed(self) -> None:
        """Once every seed of the prior is measured, tell the sampler the prior, scaled."""
        if not self.prior or self._seeds:
            return
        told = self._told()
        self.out.prior = calibrate(self.prior, self.out.state, self.out.ladder.entry)
        scaled = [(p.coords, p.score + r["offset"]) for r in self.out.prior for p in r["points"]]
        for record in self.out.prior:
            del record["points"]
        self.proposer.reseed(told, scaled)
        self.prior = []
        self._ranked_prior = [c for c, _v in sorted(scaled, key=lambda cv: -cv[1])]

    def _next_prior(self, skip: set[str]) -> Resolved | None:
        """The prior's best configuration not yet measured: where its sampler stalls
        (TPE keeps proposing the prior's measured best), the prior's own order goes on."""
        while self._ranked_prior:
            coords = self._ranked_prior.pop(0)
            found = self.space.resolve({**coords, "fidelity": self.out.ladder.entry})
            if _new(found, skip):
                return found  # type: ignore[return-value]
        return None

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
            if record["kind"] == "prior":
                self._seeds = [p for p in self._seeds if not p.matches(visit.coords)]
            if record["id"] in done:
                self._tell(step, done[record["id"]])
            else:
                pending.append(step)
        return pending


def _new(found: Resolved | str, skip: set[str]) -> bool:
    return not isinstance(found, str) and found.trial.id not in skip
