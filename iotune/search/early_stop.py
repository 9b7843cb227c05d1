"""The early-stop policy: a trial behind the leader beyond noise after its first repeats stops.

Each task the search dispatches carries an :class:`~iotune.model.records.EarlyStop`
rule: the repeats of the best visit at the trial's fidelity
(:meth:`State.reference <iotune.search.state.State.reference>`).  The worker compares
the trial's repeats with them between repeats
(:func:`iotune.measuring.precision.hopeless`) by the comparison ``recommend`` ties by
(:func:`iotune.measuring.ratio.gap_of`: the bootstrap interval of the ratio of their
medians) and stops it, marked ``stopped_early``, once that puts it behind beyond noise,
after :data:`~iotune.measuring.ratio.MIN_REPEATS` repeats (fewer, the interval is not
trusted alone).  So ``recommend`` would not call a stopped trial tied with the leader
on the repeats it has.  No rule for a re-measurement (its configuration leads or
ties), with ``search.early_stop: false``, with :data:`MIN_REPEATS` repeats or fewer
(nothing would be saved) or adaptive repeats.
"""

from __future__ import annotations

from iotune.measuring.ratio import MIN_REPEATS
from iotune.model.records import EarlyStop
from iotune.model.spec import Sweep
from iotune.search.outcome import Step
from iotune.search.policy import Loop, Policy


class EarlyStopping(Policy):
    """Stop the repeats of a trial told apart from the leader at its fidelity.

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
        if step.kind == "remeasure" or not self.enabled or self.repeats <= MIN_REPEATS:
            return None
        state = loop.out.state
        reference = state.reference(step.visit.fidelity)
        if reference is None:
            return None
        goal = state.goal
        return EarlyStop(
            tuple(goal.weights.items()),
            reference,
            after=MIN_REPEATS,
            per_call=tuple(sorted(goal.per_call)),
        )
