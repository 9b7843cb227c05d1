"""The racing policy: near-ties at full size are measured again until the leader is sure.

With one rung (or once the rungs policy has dropped to it) this policy chooses
every batch: new configurations (:meth:`Loop.fill
<iotune.search.policy.Loop.fill>`) until only ``search.remeasure`` of the budget
is left, then the race: the best pooled score again until it has
:data:`~iotune.search.state.CONFIRM` measurements, then, best first, the
contenders whose repeats cannot be told from its (``recommend``'s tie:
:func:`iotune.search.state.tied`, :meth:`State.to_remeasure
<iotune.search.state.State.to_remeasure>`).
A race settled early gives its budget back to exploring, keeping room to
confirm a new leader; with no room left to explore, the leader is measured
once more (``remeasure``).  At full size under the rungs policy, its
re-measurements are asked the same way (:meth:`Racing.remeasure`).
"""

from __future__ import annotations

from iotune.search.outcome import Step
from iotune.search.policy import Loop, Policy
from iotune.search.state import CONFIRM


class Racing(Policy):
    """Explore, then race the leaders at full size until the pick is sure beyond noise."""

    def plan(self, loop: Loop, k: int) -> list[Step]:
        out = loop.out
        limit, steps = out.limit, list[Step]()
        loop.fill(steps, limit.explore_slots(out.steps, k))
        if len(steps) < k:
            steps += loop.remeasure(steps, k)
        if not steps:  # the race is settled: explore, keeping room to confirm a new leader
            confirm = (CONFIRM - 1) * (out.ladder.top_cost(out.steps) if limit.seconds else 1)
            room = limit.room_after(out.steps, k, confirm) if limit.remeasure else k
            loop.fill(steps, room)
        if not steps and limit.remeasure:  # no room to explore: confirm the leader further
            steps = loop.confirm()
        return steps

    def remeasure(self, loop: Loop, steps: list[Step], k: int) -> list[Step]:
        chosen = {s.visit.trial.id for s in steps}
        picks = [v for v in loop.out.state.to_remeasure(k) if v.trial.id not in chosen]
        return [loop.step(v, "remeasure") for v in picks[: k - len(steps)]]

    def confirm(self, loop: Loop) -> list[Step]:
        """The leader once more; nothing when a time budget has nothing left to learn
        (every configuration measured, the race settled): the machine's time is kept."""
        leader = loop.out.state.leader()
        if leader is None or (loop.exhausted and loop.out.limit.seconds is not None):
            return []
        return [loop.step(leader, "remeasure")]
