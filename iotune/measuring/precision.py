"""When a trial has repeated enough: the interval of its median, and the stopping rule.

The interval is distribution-free: for ``n`` repeats sorted, the median lies
between the ``j``-th smallest and the ``j``-th largest with probability
``1 - 2 P(B < j)``, ``B ~ Binomial(n, 1/2)`` (order statistics; no assumption
about the shape of the noise, which on shared machines is skewed and
heavy-tailed).  ``j`` is the largest rank that keeps that probability at or
above :data:`CONFIDENCE`; it needs at least :data:`MIN_AUTO_REPEATS` repeats.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Iterator, Mapping, Sequence

import numpy as np

from iotune.measuring.ratio import gap_of
from iotune.model.records import EarlyStop, TrialResult
from iotune.model.spec import MeasureSpec

CONFIDENCE = 0.95
#: the fewest repeats with a 95 % interval of the median (1 - 2/64 = 0.969)
MIN_AUTO_REPEATS = 6
METHOD = "order statistics of the median (binomial ranks, distribution-free), 95 %"


def _rank(n: int, confidence: float) -> int:
    """The largest ``j`` with ``1 - 2 P(B <= j - 1) >= confidence``; 0 when none."""
    below, best = 0.0, 0
    for j in range(1, n // 2 + 1):
        below += math.comb(n, j - 1) / 2**n  # P(B <= j - 1)
        if 1 - 2 * below < confidence:
            break
        best = j
    return best


def median_interval(
    values: Sequence[float], confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """The ``confidence`` interval of the median of ``values`` (NaN dropped), or None."""
    data = sorted(v for v in values if not math.isnan(v))
    j = _rank(len(data), confidence)
    if j == 0:
        return None
    return data[j - 1], data[len(data) - j]


def relative_half_width(values: Sequence[float]) -> float:
    """Half the interval's width over the median; ``inf`` while there is no interval."""
    data = [v for v in values if not math.isnan(v)]
    interval = median_interval(data)
    if interval is None:
        return math.inf
    median = statistics.median(data)
    return (interval[1] - interval[0]) / 2 / median if median > 0 else math.inf


def series(result: TrialResult, per_call: Collection[str] = ()) -> dict[str, list[float]]:
    """Throughput per repeat of every metric the trial measured: write, read:PATTERN.

    MiB/s, except for the metrics in ``per_call`` (the user's own code, whose bytes
    differ by layout): calls per second, ``1 / s`` of each repeat (one call).
    """
    found = {"write": [w["MiBps"] for w in result.write]}
    for pattern, runs in result.reads.items():
        metric = f"read:{pattern}"
        if metric in per_call:
            found[metric] = [1.0 / r["s"] if r.get("s", 0) > 0 else math.nan for r in runs]
        else:
            found[metric] = [r["MiBps"] for r in runs]
    return found


def precise(result: TrialResult, precision: float) -> bool:
    """Whether every metric's interval is within ``precision`` of its median."""
    return all(relative_half_width(v) <= precision for v in series(result).values())


def repeat_indices(
    measure: MeasureSpec, result: TrialResult, early_stop: EarlyStop | None = None
) -> Iterator[int]:
    """Indices of the timed repeats to run, deciding after each one whether to go on.

    ``result`` must have each repeat's figures appended before the next index
    is asked for.  With ``early_stop`` (a search's), a trial its first repeats
    already put behind the leader beyond noise stops there, marked ``stopped_early``.
    """
    n = 0
    while n < (measure.repeats if not measure.adaptive else measure.max_repeats) and (
        not measure.adaptive or n < MIN_AUTO_REPEATS or not precise(result, measure.precision)
    ):
        if early_stop is not None and hopeless(result, early_stop):
            result.stop = "stopped_early"
            return
        yield n
        n += 1


def repeat_log_scores(
    result: TrialResult, weights: Mapping[str, float], per_call: Collection[str] = ()
) -> list[float]:
    """Each repeat's log score: the weighted mean of its metrics' log MiB/s (log calls
    a second for those in ``per_call``, :func:`series`)."""
    found = series(result, per_call)
    if any(not found.get(m) for m in weights):
        return []
    n = min(len(found[m]) for m in weights)
    total = sum(weights.values())
    return [
        sum(w * math.log(max(found[m][i], 1e-300)) for m, w in weights.items()) / total
        for i in range(n)
    ]


def hopeless(result: TrialResult, rule: EarlyStop) -> bool:
    """Whether ``result``'s repeats so far (at least ``rule.after``) are behind the leader's
    (``rule.reference``) beyond noise: slower by the ratio of their medians, and its
    bootstrap interval does not hold 1 (:func:`iotune.measuring.ratio.gap_of`, the
    comparison ``recommend`` ties by)."""
    scores = repeat_log_scores(result, dict(rule.weights), rule.per_call)
    if len(scores) < rule.after:
        return False
    gap = gap_of(np.exp(scores), np.exp(rule.reference))
    return gap.ratio < 1 and not gap.tied


def batches(measure: MeasureSpec, result: TrialResult) -> Iterator[int]:
    """Repeat counts for trials that start all their repeats at once (MPI launches)."""
    if not measure.adaptive:
        yield measure.repeats
        return
    yield MIN_AUTO_REPEATS
    while len(result.write) < measure.max_repeats and not precise(result, measure.precision):
        yield min(2, measure.max_repeats - len(result.write))
