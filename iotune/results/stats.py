"""Statistics over repeats, one implementation for every reader: NaN-aware and warning-free.

Reached through ``ds.iotune.median()`` and ``da.iotune.spread()`` (:mod:`iotune.results.accessor`).
:func:`rank_test` (one-sided Mann-Whitney U, exact) tells whether one configuration's
repeats beat another's beyond noise; :func:`separate` turns it into the verdict on a
winner and its runner-up, :class:`Separation`, as ``ds.iotune.best(...).separation``,
``iotune recommend`` and the explorer show it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iotune.model.objective import ALPHA, check_alpha


def nanmedian(a: Any, axis: int | tuple[int, ...] = -1) -> np.ndarray:
    """The median along ``axis`` ignoring NaN, as :func:`numpy.nanmedian`, without warnings.

    Failed points make all-NaN slices routine (they give NaN), and
    ``warnings.catch_warnings`` is not thread-safe, so the warning is avoided
    rather than silenced.
    """
    a = _last(a, axis)
    a = np.sort(a, axis=-1)  # NaN sorts last
    n = (~np.isnan(a)).sum(axis=-1, keepdims=True)
    lo, hi = (np.take_along_axis(a, np.maximum(k, 0), axis=-1) for k in ((n - 1) // 2, n // 2))
    return np.where(n > 0, (lo + hi) / 2, np.nan)[..., 0]


def spread(a: Any, axis: int | tuple[int, ...] = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median, minimum and maximum along ``axis``, ignoring NaN; all-NaN slices give NaN."""
    a = _last(a, axis)
    return nanmedian(a), np.fmin.reduce(a, axis=-1), np.fmax.reduce(a, axis=-1)


def _last(a: Any, axis: int | tuple[int, ...]) -> np.ndarray:
    """``a`` with the axes ``axis`` flattened into the last one."""
    a = np.asarray(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    a = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    return a.reshape(*a.shape[: a.ndim - len(axes)], -1)


#: the advice when the repeats cannot separate the winner from the runner-up
MORE_REPEATS = "measure more repeats (measure.repeats: auto)"
#: largest sample on either side for the exact test; larger samples use the normal approximation
EXACT_LIMIT = 50


@dataclass(frozen=True)
class RankTest:
    """A one-sided Mann-Whitney U test of two samples and the size of their difference.

    Attributes
    ----------
    p_value
        Probability, with no difference between the samples, of a ``u`` at least
        as far in the tested direction as the one observed.
    u
        Pairs ``(x_i, y_j)`` with ``x_i`` better than ``y_j``, a tie counting half.
    n, m
        Values of ``x`` and ``y`` after dropping NaN.
    exact
        Whether ``p_value`` is exact (both samples at most :data:`EXACT_LIMIT`)
        rather than the normal approximation.
    shift
        Hodges-Lehmann estimate of ``x`` minus ``y``: the median of the pairwise
        differences ``x_i - y_j``, in the samples' unit.
    relative
        ``y``'s median relative to ``x``'s: ``median(y) / median(x) - 1``
        (``-0.123``: ``y``'s median is 12.3 % below ``x``'s); NaN if ``x``'s is 0.
    """

    p_value: float
    u: float
    n: int
    m: int
    exact: bool
    shift: float
    relative: float


def min_p_value(n: int, m: int) -> float:
    """The smallest one-sided p-value samples of ``n`` and ``m`` values can give.

    ``1 / comb(n + m, n)``, when every value of one sample beats every value of
    the other: 0.1 for 3 and 2, 0.05 for 3 and 3, 1/252 for 5 and 5; 1 if a
    sample is empty.
    """
    return 1.0 / math.comb(n + m, n)


def rank_test(x: Any, y: Any, *, larger: bool = True) -> RankTest:
    """One-sided Mann-Whitney U test: are ``x``'s values stochastically better than ``y``'s?

    Parameters
    ----------
    x, y
        The repeats of two configurations, any shape (flattened); NaN repeats are dropped.
    larger
        Larger values are better (throughput, scores); ``False`` for seconds or bytes,
        where the direction of the test flips.

    Returns
    -------
    RankTest
        The p-value, ``U``, the sample sizes, the Hodges-Lehmann shift and the
        relative difference of the medians.

    Raises
    ------
    ValueError
        A sample has no finite value.

    Notes
    -----
    With both samples of at most :data:`EXACT_LIMIT` values the p-value is exact: the
    distribution of ``x``'s rank sum over every split of the pooled values into ``n``
    and ``m``, counted by dynamic programming over the ranks.  Ties get mid-ranks and
    are counted as tied, so the test stays exact rather than merely conservative (the
    no-ties table on mid-ranks can fall below the level: 0.5, not 1, for two equal
    values).  Larger samples: the normal approximation, tie- and continuity-corrected.
    """
    x, y = _finite(x), _finite(y)
    n, m = x.size, y.size
    if not (n and m):
        raise ValueError(f"a rank test needs a value on each side, not {n} and {m}")
    sign = 1.0 if larger else -1.0
    ranks2 = _double_midranks(np.concatenate([sign * x, sign * y]))
    w2 = int(ranks2[:n].sum())  # twice the rank sum of x
    exact = max(n, m) <= EXACT_LIMIT
    p = _exact_p(ranks2, n, w2) if exact else _normal_p(ranks2, n, w2)
    mx = float(np.median(x))
    return RankTest(
        p_value=min(p, 1.0),
        u=w2 / 2 - n * (n + 1) / 2,
        n=n,
        m=m,
        exact=exact,
        shift=float(np.median(np.subtract.outer(x, y))),
        relative=float(np.median(y)) / mx - 1 if mx else math.nan,
    )


def _finite(a: Any) -> np.ndarray:
    a = np.asarray(a, dtype=float).ravel()
    return a[~np.isnan(a)]


def _double_midranks(values: np.ndarray) -> np.ndarray:
    """Twice the mid-ranks (1-based) of ``values``: integers even where values tie."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], ordered.size]  # a tie group holds ranks starts+1 .. ends
    doubled = np.repeat(starts + 1 + ends, ends - starts)
    out = np.empty(values.size, dtype=np.int64)
    out[order] = doubled
    return out


def _exact_p(ranks2: np.ndarray, n: int, w2: int) -> float:
    """P(twice the rank sum of ``n`` values drawn from ``ranks2`` >= ``w2``), exactly.

    ``ways[k, s]`` counts the ways to choose ``k`` of the ranks seen so far with
    doubled sum ``s`` (floats: the counts reach comb(100, 50) ~ 1e29).
    """
    top = int(ranks2.sum())
    ways = np.zeros((n + 1, top + 1))
    ways[0, 0] = 1.0
    for r in ranks2.tolist():
        ways[1:, r:] = ways[1:, r:] + ways[:-1, : top + 1 - r]
    return float(ways[n, w2:].sum() / math.comb(ranks2.size, n))


def _normal_p(ranks2: np.ndarray, n: int, w2: int) -> float:
    """The normal approximation of :func:`_exact_p`, tie- and continuity-corrected."""
    total, m = ranks2.size, ranks2.size - n
    _, ties = np.unique(ranks2, return_counts=True)
    var = n * m / 12 * ((total + 1) - float((ties**3 - ties).sum()) / (total * (total - 1)))
    if var <= 0:
        return 1.0
    z = (w2 / 2 - n * (total + 1) / 2 - 0.5) / math.sqrt(var)
    return 0.5 * math.erfc(z / math.sqrt(2))


@dataclass(frozen=True)
class Separation:
    """Whether the winner beats the runner-up beyond the noise of the repeats.

    Attributes
    ----------
    runner_up
        The runner-up's label.
    quantity
        What was tested: the metric (``write``), or ``score`` (the per-repeat
        combined score of weights over several metrics).
    unit
        The quantity's unit: ``MiB/s``, ``calls/s``, ``s``, ``1`` (a score) ...
    beats
        ``True``: beyond noise (``p_value <= alpha``); ``False``: not separable;
        ``None``: too few repeats to tell (even complete separation could not
        reach ``alpha``, see :func:`min_p_value`).
    p_value
        One-sided Mann-Whitney p-value (:func:`rank_test`);
        ``None`` without a repeat on each side.
    alpha
        The significance level.
    repeats
        Repeats (not NaN) of the winner and the runner-up.
    exact
        Whether ``p_value`` is exact rather than the normal approximation.
    shift
        Hodges-Lehmann estimate of winner minus runner-up, in ``unit``.
    difference
        The runner-up's median relative to the winner's (``-0.123``: 12.3 % lower).
    intervals_overlap
        Per metric whose confidence intervals of the median (``<variable>_ci_low``,
        ``_ci_high``) both have: whether they overlap.  Reported only; the verdict
        is the rank test's.
    larger
        Whether larger values of ``quantity`` are better (``False`` for seconds, bytes).
    reverse_p_value
        The one-sided p-value the other way round: the runner-up better than the
        winner (``None`` without a repeat on each side).
    why
        How the winner was picked when not by this median ("as the 40% smaller
        file ..."); said only when the runner-up has the better median.
    """

    runner_up: str
    quantity: str
    unit: str
    beats: bool | None
    p_value: float | None
    alpha: float
    repeats: tuple[int, int]
    exact: bool = True
    shift: float | None = None
    difference: float | None = None
    intervals_overlap: dict[str, bool] = field(default_factory=dict)
    larger: bool = True
    reverse_p_value: float | None = None
    why: str = ""

    @property
    def runner_up_ahead(self) -> bool:
        """Whether the runner-up's median is the better one (the winner won by another rule)."""
        d = self.difference
        if d is None or not math.isfinite(d) or d == 0:
            return False
        return (d > 0) == self.larger

    @property
    def text(self) -> str:
        """The verdict in one line, as ``iotune recommend`` and the explorer show it.

        Never calls the runner-up faster than a winner said to beat it: when the
        runner-up has the better median, the line says so, tests that direction, and
        says why the winner was picked (:attr:`why`).
        """
        if self.runner_up_ahead:
            return self._ahead_text()
        n, m = self.repeats
        who = f"the runner-up ({self.runner_up}{self._how()})"
        ci = self._intervals()
        if self.beats is None:
            return (
                f"cannot tell whether the winner beats {who}: too few repeats to tell "
                f"({n} and {m}){ci}; {MORE_REPEATS}"
            )
        test = f"one-sided Mann-Whitney p = {self.p_value:.2g} over {n} and {m} repeats"
        test += "" if self.exact else " (normal approximation)"
        if self.beats:
            return f"the winner beats {who} beyond noise: {test}{ci}"
        return f"the winner is not separable from {who}: {test}{ci}; {MORE_REPEATS}"

    def _ahead_text(self) -> str:
        """The runner-up has the better median: that, the test that way, and why not it."""
        n, m = self.repeats
        how = self._how().removeprefix(", ")
        head = f"the runner-up ({self.runner_up}) has the better median, {how}"
        why = self.why or f"by another rule than the median of {self.quantity}"
        tail = f"; the winner was picked {why}"
        ci = self._intervals()
        p = self.reverse_p_value
        if self.beats is None or p is None:
            return f"{head}; too few repeats to tell them apart ({n} and {m}){ci}{tail}"
        test = f"one-sided Mann-Whitney p = {p:.2g} over {n} and {m} repeats"
        test += "" if self.exact else " (normal approximation)"
        if p <= self.alpha * (1 + 1e-9):
            return f"{head}, beyond noise: {test}{ci}{tail}"
        return f"{head}, within noise: {test}{ci}{tail}"

    def _how(self) -> str:
        d = self.difference
        if d is None or not math.isfinite(d):
            return ""
        if d == 0:
            return ", same median"
        if self.unit in ("MiB/s", "calls/s", "s"):
            words = ("faster", "slower") if self.unit == "s" else ("slower", "faster")
        else:
            words = ("lower", "higher")
        word = words[0] if d < 0 else words[1]
        return f", {'score ' if self.quantity == 'score' else ''}{abs(d):.1%} {word}"

    def _intervals(self) -> str:
        found = self.intervals_overlap
        overlap = [m for m, o in found.items() if o]
        apart = [m for m, o in found.items() if not o]
        if not found:
            return ""
        if not apart:
            return "; their confidence intervals of the median overlap"
        if not overlap:
            return "; their confidence intervals of the median do not overlap"
        return (
            f"; their confidence intervals of the median overlap for {', '.join(overlap)}, "
            f"not for {', '.join(apart)}"
        )


def separate(
    x: Any,
    y: Any,
    *,
    runner_up: str,
    quantity: str,
    unit: str,
    larger: bool = True,
    alpha: float = ALPHA,
    intervals_overlap: Mapping[str, bool] | None = None,
    why: str = "",
) -> Separation:
    """The :class:`Separation` of repeats ``x`` (the winner) from ``y`` (the runner-up).

    Parameters
    ----------
    x, y
        The repeats of the tested quantity; NaN repeats are dropped.
    runner_up, quantity, unit
        As in :class:`Separation`.
    larger
        Larger is better (throughput, scores); ``False`` for seconds or bytes.
    alpha
        Significance level.
    intervals_overlap
        Whether the confidence intervals overlap, per metric, to report alongside.
    why
        How the winner was picked, said when the runner-up has the better median.
    """
    check_alpha(alpha)
    n, m = (int(np.count_nonzero(~np.isnan(np.asarray(v, dtype=float)))) for v in (x, y))
    test = rank_test(x, y, larger=larger) if n and m else None
    back = rank_test(y, x, larger=larger) if n and m else None
    if test is None or min_p_value(n, m) > alpha:
        beats = None
    else:
        beats = test.p_value <= alpha * (1 + 1e-9)
    return Separation(
        runner_up=runner_up,
        quantity=quantity,
        unit=unit,
        beats=beats,
        p_value=None if test is None else test.p_value,
        alpha=alpha,
        repeats=(n, m),
        exact=True if test is None else test.exact,
        shift=None if test is None else test.shift,
        difference=None if test is None or math.isnan(test.relative) else test.relative,
        intervals_overlap=dict(intervals_overlap or {}),
        larger=larger,
        reverse_p_value=None if back is None else back.p_value,
        why=why,
    )
