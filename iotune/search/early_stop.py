"""The early-stop policy: a trial hopeless beyond noise after its first repeats stops.

Each task the search dispatches carries an :class:`~iotune.model.records.EarlyStop`
rule: the bar is the worst repeat of the best visit at the trial's fidelity, less the
run's noise (:meth:`State.stop_bar <iotune.search.state.State.stop_bar>`); the worker
applies it between repeats (:func:`iotune.measuring.precision.repeat_indices`) and marks
the result ``stopped_early``.  A stopped trial's repeats lie wholly below the leader's,
so the comparison ``recommend`` ties by (:mod:`iotune.results.gaps`: the interval of
their ratio) would not call it tied with the leader either.  No rule for a
re-measurement (its configuration leads or ties), with ``search.early_stop: false``, or
with 2 repeats or fewer (nothing would be saved) or adaptive repeats.
"""

from __future__ import annotations

from iotune.model.records import EarlyStop
from iotune.model.spec import Sweep
from iotune.search.outcome import Step
from iotune.search.policy import Loop, Policy


class EarlyStopping(Policy):
    """Stop the repeats of a trial that cannot tie the leader at its fidelity.

    Parameters
    ----------
    enabled
        ``search.early_stop``.
    repeats
        The fixed repeats of a trial (0: adaptive repeats, never stopped by the search).
    """

    def __init__(self, *, enabled: bool, repeats: int) -> None:
        self.enabled, self.repeats = enabled, repeats

    @classmethod
    def of(cls, sweep: Sweep) -> EarlyStopping:
        """The policy ``sweep`` asks for (its ``search.early_stop`` and repeats)."""
        assert sweep.search is not None
        repeats = sweep.measure.repeats if not sweep.measure.adaptive else 0
        return cls(enabled=sweep.search.early_stop, repeats=repeats)

    def early_stop(self, loop: Loop, step: Step) -> EarlyStop | None:
        if step.kind == "remeasure" or not self.enabled or self.repeats <= 2:
            return None
        state = loop.out.state
        bar = state.stop_bar(step.visit.fidelity)
        if bar is None:
            return None
        goal = state.goal
        return EarlyStop(tuple(goal.weights.items()), bar, per_call=tuple(sorted(goal.per_call)))
