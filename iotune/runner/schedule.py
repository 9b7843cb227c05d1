"""The order in which trials and their repeats run: interleaved rounds and noise probes.

A machine drifts while a sweep runs (page reporting, neighbours, thermal
limits).  Run back to back, every repeat of a trial meets the same moment of
that drift, and whichever configuration ran during a slow spell looks worse
than it is.  Interleaved trials therefore run one timed repeat per task, in
rounds: round ``r`` holds repeat ``r`` of every trial that still needs one, in
an order shuffled with ``(seed, r)``, so the drift spreads over all
configurations.  The order depends only on the seed and on what the journal
holds, so a run killed at any point resumes where it stopped.

Through the run the sweep also measures its own noise: single repeats of one
reference configuration (the spec's ``baseline``, else the plan's first
trial), evenly spaced among the other work.  Their spread is the smallest
difference the run can see (:mod:`iotune.results.noise`).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from iotune.backends import get_backend
from iotune.measuring import precision
from iotune.model.records import Trial, TrialResult, TrialTask
from iotune.model.spec import MeasureSpec
from iotune.runner.journal import Journal
from iotune.runner.plan import Plan


@dataclass(frozen=True)
class Work:
    """One task of the run, and what its result is: a whole trial, a repeat or a probe."""

    task: TrialTask
    kind: str  # whole | part | probe
    trial_id: str
    number: int = 0  # the repeat (part) or the probe's number


def interleaves(trial: Trial, measure: MeasureSpec) -> bool:
    """Whether ``trial`` runs a repeat per task (see :data:`iotune.model.spec.ORDERS`)."""
    if measure.order != "auto":
        return measure.order == "interleaved"
    backend = get_backend(trial.backend)()
    return not backend.launches(trial.params) and int(trial.params.get("concurrency", 1)) == 1


def single_repeat(task: TrialTask) -> TrialTask:
    """``task`` measuring exactly one timed repeat."""
    return replace(task, measure=replace(task.measure, repeats=1, adaptive=False))


def round_order(ids: list[str], *, seed: int, number: int) -> list[str]:
    """The seeded order of round ``number``; the same for every run with this seed."""
    order = sorted(ids)
    random.Random(f"{seed}:{number}").shuffle(order)
    return order


def merge(parts: Mapping[int, TrialResult]) -> TrialResult:
    """One trial's result from its repeats measured one at a time (in repeat order)."""
    ordered = [parts[r] for r in sorted(parts)]
    first = ordered[0]
    merged = TrialResult(
        first.id,
        "ok",
        raw_bytes=first.raw_bytes,
        file_bytes=first.file_bytes,
        stored=first.stored,
        started=min(p.started for p in ordered),
        ended=max(p.ended for p in ordered),
        busy_s=sum(p.seconds for p in ordered),
    )
    for part in ordered:
        if part.status != "ok":
            merged.status, merged.error = part.status, part.error
        merged.write += part.write
        for pattern, runs in part.reads.items():
            merged.reads.setdefault(pattern, []).extend(runs)
    return merged


def stop_reason(merged: TrialResult, measure: MeasureSpec) -> str:
    """Why the trial ``merged`` from its repeats needs no more (fixed, precision,
    max_repeats, failed), or ''."""
    n = len(merged.write)
    if merged.status != "ok":
        return "failed"
    if not measure.adaptive:
        return "fixed" if n >= measure.repeats else ""
    # a trial whose last allowed repeat made it precise stopped for precision
    if n >= precision.MIN_AUTO_REPEATS and precision.precise(merged, measure.precision):
        return "precision"
    if n >= measure.max_repeats:
        return "max_repeats"
    return ""


def collect(journal: Journal) -> dict[str, TrialResult]:
    """Every trial measured so far: complete ones, and the repeats of unfinished ones."""
    found = dict(journal.done)
    for trial_id, parts in journal.parts.items():
        if trial_id not in found and parts:
            found[trial_id] = replace(merge(parts), stop="interrupted")
    return found


def reference_trial(plan: Plan) -> Trial | None:
    """The configuration the probes measure: the spec's ``baseline``, else the first trial."""
    wanted, trials = plan.sweep.baseline, {t.id: t for t in plan.trials}
    for point in plan.points if wanted else ():
        if point.trial_id and all(point.coords.get(k, v) == v for k, v in wanted.items()):
            return trials[point.trial_id]
    return plan.trials[0] if plan.trials else None


class Schedule:
    """The batches of work of a run, decided from what ``journal`` already holds.

    Parameters
    ----------
    plan
        The sweep's plan.
    journal
        Its journal; :meth:`record` appends to it, and later batches depend on it.
    make_task
        Builds the task of a trial (scratch, launcher).
    """

    def __init__(
        self, plan: Plan, journal: Journal, make_task: Callable[[Trial], TrialTask]
    ) -> None:
        self.measure = plan.sweep.measure
        self.journal = journal
        self.make_task = make_task
        inter = [interleaves(t, self.measure) for t in plan.trials]
        self.interleaved = [t for t, i in zip(plan.trials, inter, strict=True) if i]
        self.whole = [t for t, i in zip(plan.trials, inter, strict=True) if not i]
        per_trial = precision.MIN_AUTO_REPEATS if self.measure.adaptive else self.measure.repeats
        #: repeats an interleaved trial is expected to take (one task each)
        self.per_trial = max(1, per_trial)
        #: expected tasks of the whole run (all trials, so a resumed run spaces probes alike)
        self.expected = len(self.whole) + per_trial * len(self.interleaved)
        probes = self.measure.noise_probes
        self.reference = reference_trial(plan) if probes else None
        self.every = max(1, self.expected // probes) if probes else 0

    @property
    def probes(self) -> int:
        """Probes the run is expected to take."""
        return -(-self.expected // self.every) if self.every else 0

    def started(self) -> int:
        """Tasks already recorded (when resuming)."""
        return self._issued() + len(self.journal.probes)

    def trials_done(self) -> float:
        """Trials already recorded, a started interleaved one counted by its share of repeats."""
        return sum(self.credit(t.id) for t in self.whole + self.interleaved)

    def credit(self, trial_id: str) -> float:
        """How much of a trial the journal holds: 1 once complete, else its share of the
        repeats it is expected to take (at most 0.9: an adaptive one may need more).

        A progress bar moves by the change of this, so a run resumed after some repeats
        counts each trial once (never past the plan's trials).
        """
        if trial_id in self.journal.done:
            return 1.0
        return min(len(self.journal.parts.get(trial_id, {})) / self.per_trial, 0.9)

    def _issued(self) -> int:
        whole = sum(1 for t in self.whole if t.id in self.journal.done)
        return whole + sum(len(p) for p in self.journal.parts.values())

    def _pending(self) -> list[Trial]:
        return [t for t in self.interleaved if t.id not in self.journal.done]

    def batches(self) -> Iterator[list[Work]]:
        """Batches to run in turn; each is decided after the previous one is recorded."""
        first = [Work(self.make_task(t), "whole", t.id) for t in self.whole]
        first = [w for w in first if w.trial_id not in self.journal.done]
        if first:
            yield self._with_probes(first)
        while pending := self._pending():
            number = min(len(self.journal.parts.get(t.id, {})) for t in pending)
            due = {t.id: t for t in pending if len(self.journal.parts.get(t.id, {})) == number}
            order = round_order(list(due), seed=self.measure.seed, number=number)
            yield self._with_probes(
                [Work(single_repeat(self.make_task(due[i])), "part", i, number) for i in order]
            )

    def _with_probes(self, work: list[Work]) -> list[Work]:
        """``work`` with the probes due among it, each before the task it precedes."""
        if self.reference is None:
            return work
        out, issued, made = [], self._issued(), len(self.journal.probes)
        for item in work:
            if issued // self.every >= made:
                out.append(self._probe(made))
                made += 1
            out.append(item)
            issued += 1
        return out

    def _probe(self, number: int) -> Work:
        assert self.reference is not None
        ref = self.reference
        # an id of its own: its scratch and its result never mix with the trial's
        probe = dataclasses.replace(ref, id=f"noise{number}-{ref.id}")
        return Work(single_repeat(self.make_task(probe)), "probe", ref.id, number)

    def record(self, work: Work, result: TrialResult) -> TrialResult | None:
        """Journal ``result`` of ``work``; return the trial's result once it is complete."""
        if work.kind == "probe":
            self.journal.append_probe(result, work.number)
            return None
        if work.kind == "whole":
            self.journal.append(result)
            return result
        self.journal.append_part(result, work.number)
        merged = merge(self.journal.parts[work.trial_id])
        reason = stop_reason(merged, self.measure)
        if not reason:
            return None
        merged.stop = "" if reason == "failed" else reason
        self.journal.append(merged)
        return merged
