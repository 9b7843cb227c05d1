"""Whether two points' repeats tell them apart: the one comparison of every tie.

The ratio of two points' medians over their repeats, with a seeded percentile
bootstrap interval (:func:`ratio_interval`); the two are tied when that interval
holds 1 (:func:`gap_of`).  Below :data:`MIN_REPEATS` repeats on either side the
interval means little; then (and only then) the run's noise floor joins them too
when they differ by less than it, and more repeats would decide
(:meth:`Gap.repeats_to_decide`).  Repeats whose ranges do not overlap put every
resample on one side of 1, so no bootstrap is drawn for them (``low`` and
``high`` are NaN: not tied).

It lives with the measurements because a worker applies it too: a search's early
stop (:func:`iotune.measuring.precision.hopeless`) ends a trial the comparison
already separates from the leader.  ``recommend``'s ties
(:mod:`iotune.results.gaps`), the speedups over baselines
(:mod:`iotune.results.speedup`), a search's racing and its promotions to full
size (:mod:`iotune.search.state`) all call it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: bootstrap resamples and confidence of the ratio's interval, and the resampling seed
RESAMPLES, CONFIDENCE, SEED = 2000, 0.95, 0


def ratio_interval(best: Any, base: Any, *, seed: int = SEED) -> tuple[float, float, float]:
    """The ratio of medians ``best / base`` and its bootstrap interval (NaN repeats dropped).

    Returns
    -------
    ratio, low, high
        NaN when either side has no repeat; ``low`` and ``high`` NaN when either has
        one (a single repeat resamples to itself: an interval of width 0 that says
        nothing, :func:`iotune.results.speedup.interval_text` says ``n=1, no interval``).
    """
    x = np.asarray(best, dtype=float)
    y = np.asarray(base, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    if not x.size or not y.size or np.median(y) <= 0:
        return math.nan, math.nan, math.nan
    ratio = float(np.median(x) / np.median(y))
    if min(x.size, y.size) < 2:
        return ratio, math.nan, math.nan
    rng = np.random.default_rng(seed)
    xs = np.median(rng.choice(x, size=(RESAMPLES, x.size)), axis=1)
    ys = np.median(rng.choice(y, size=(RESAMPLES, y.size)), axis=1)
    ratios = xs / np.where(ys > 0, ys, np.nan)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.nanpercentile(ratios, [tail, 100 - tail])
    return ratio, float(min(low, ratio)), float(max(high, ratio))


#: repeats on each side below which the interval is not trusted alone (the floor decides)
MIN_REPEATS = 3
#: the noise probes a floor is measured from, by default (to scale it to repeats)
PROBES = 6
#: how the comparison is made, as outputs say it
METHOD = (
    f"{CONFIDENCE:.0%} bootstrap interval of the ratio of medians over the repeats "
    f"(below {MIN_REPEATS} repeats: the run's noise floor)"
)


@dataclass(frozen=True)
class Gap:
    """A point against a reference (the leader) on the objective.

    ``ratio`` is the point's median over the reference's (0.97: 3 % slower), ``low``
    and ``high`` its interval (NaN: repeats apart, not drawn); ``repeats`` the fewer
    repeats of the two; ``noise`` the run's floor, used only below :data:`MIN_REPEATS`.
    """

    ratio: float
    low: float
    high: float
    repeats: int
    noise: float | None = None

    @property
    def by_floor(self) -> bool:
        """Too few repeats for the interval alone: the floor decides too."""
        return self.repeats < MIN_REPEATS

    @property
    def in_interval(self) -> bool:
        """The interval holds 1: the repeats cannot tell the two apart."""
        return self.low <= 1.0 <= self.high

    @property
    def within_floor(self) -> bool:
        """Too few repeats, and closer than the run's noise floor."""
        close = self.noise is not None and abs(1.0 - self.ratio) <= self.noise
        return self.by_floor and close

    @property
    def tied(self) -> bool:
        """The two cannot be told apart: the interval holds 1, or (too few repeats) the floor."""
        return self.in_interval or self.within_floor

    @property
    def loss(self) -> float:
        """How much slower the point is than the reference, by its estimate (0.03: 3 %)."""
        return 1.0 - self.ratio

    def text(self) -> str:
        """``3% slower [1% to 6%]``: the loss and its interval (faster: a negative loss)."""
        shown = f"{self.loss:.0%} slower"
        if math.isnan(self.low):
            return shown
        return f"{shown} [{1.0 - self.high:.0%} to {1.0 - self.low:.0%}]"

    def repeats_to_decide(self) -> int:
        """About how many repeats a point would tell the two apart with.

        The interval's half-width shrinks as one over the square root of the repeats;
        below :data:`MIN_REPEATS`, the floor (the width of :data:`PROBES` probes'
        interval) stands for it.
        """
        behind = max(abs(self.loss), 1e-3)
        if self.by_floor or math.isnan(self.low):
            width = (self.noise or 0.0) / 2
            return max(MIN_REPEATS, math.ceil(PROBES * (width / behind) ** 2))
        reach = max(self.high - self.ratio, self.ratio - self.low)
        return max(self.repeats + 1, math.ceil(self.repeats * (reach / behind) ** 2))


def gap_of(
    point: Sequence[float] | np.ndarray,
    reference: Sequence[float] | np.ndarray,
    noise: float | None = None,
) -> Gap:
    """The :class:`Gap` of ``point``'s repeats against ``reference``'s (positive, NaN dropped)."""
    x = np.asarray(point, dtype=float)
    y = np.asarray(reference, dtype=float)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    repeats = int(min(x.size, y.size))
    if not repeats or np.median(y) <= 0:
        return Gap(math.nan, math.nan, math.nan, repeats, noise)
    ratio = float(np.median(x) / np.median(y))
    if x.max() < y.min() or y.max() < x.min():  # every resample on one side of 1
        return Gap(ratio, math.nan, math.nan, repeats, noise)
    _ratio, low, high = ratio_interval(x, y)
    return Gap(ratio, low, high, repeats, noise)
