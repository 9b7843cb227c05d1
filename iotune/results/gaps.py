"""How far one configuration is behind another on an objective, decided by their repeats.

The one comparison behind every "cannot be told apart" (``recommend``'s ties, "keep
your settings", a search's racing, promotions and early stops) is
:func:`iotune.measuring.ratio.gap_of`: the ratio of the two points' medians over
their repeats, tied when its seeded bootstrap interval holds 1 (the run's noise
floor only below :data:`~iotune.measuring.ratio.MIN_REPEATS` repeats).  This module
applies it to two ranked candidates: what they are compared on (:func:`quantity`)
and the gap between them (:func:`between`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from iotune.measuring.ratio import CONFIDENCE, MIN_REPEATS, Gap, gap_of

if TYPE_CHECKING:
    from iotune.results.objective import Candidate

#: how the comparison is made, as outputs say it
METHOD = (
    f"{CONFIDENCE:.0%} bootstrap interval of the ratio of medians over the repeats "
    f"(below {MIN_REPEATS} repeats: the run's noise floor)"
)


def quantity(a: Candidate, b: Candidate, weights: Mapping[str, float]) -> tuple[list, list]:
    """What two candidates are compared on: one metric's repeats, else per-repeat scores
    (the metric of the largest weight where they have none)."""
    if len(weights) > 1 and a.repeat_scores and b.repeat_scores:
        return a.repeat_scores, b.repeat_scores
    metric = max(weights, key=weights.__getitem__)
    return a.repeats.get(metric, []), b.repeats.get(metric, [])


def between(
    reference: Candidate,
    point: Candidate,
    weights: Mapping[str, float],
    noise: float | None = None,
) -> Gap:
    """``point`` against ``reference`` on the objective's ``weights`` (:func:`gap_of`)."""
    mine, theirs = quantity(point, reference, weights)
    return gap_of(mine, theirs, noise)
