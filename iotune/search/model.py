"""Pooling what neighbouring points say: each visit's score shrunk toward a main-effects model.

A point measured once or twice is a noisy figure; its neighbours (points that
share some of its parameter values) say something about it too.  The model is
additive in log score, one effect per value of each parameter, fitted by ridge
least squares on every visit.  Each visit's *estimate* is the precision-weighted
mean of its own pooled score and what the model fitted *without it* predicts
(leave-one-out, so a lucky measurement does not vouch for itself):

    estimate = (score / noise² + prediction / misfit²) / (1 / noise² + 1 / misfit²)

``noise²`` is the variance of the visit's pooled median, from the spread of all
repeats (pooled, robust) and how many repeats the visit has; ``misfit²`` is how
far points really are from the additive model beyond noise (leave-one-out
residuals less the noise), so where parameters interact strongly a visit keeps
its own score, and where the model fits, a lucky figure is pulled back.  This is
empirical Bayes with a normal prior; the search uses it to choose which points
to re-measure, and the recommendation stays the best pooled score among the
points re-measured (what ``iotune recommend`` ranks).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: ridge penalty of each effect: as if each value had one more visit at the mean score
RIDGE = 1.0
#: relative efficiency of a median: its variance is about pi/2 times the mean's
MEDIAN_VARIANCE = math.pi / 2
#: median of a chi-square with one degree of freedom (a squared standard normal)
CHI2_MEDIAN = 0.4549
#: fewer visits than this: no model, each visit keeps its own score
MIN_VISITS = 5


def repeat_spread(repeats: Sequence[np.ndarray]) -> float:
    """Robust standard deviation of one repeat's log score, pooled over visits (NaN without)."""
    deviations = [np.abs(r - np.median(r)) for r in repeats if r.size >= 2]
    if not deviations:
        return math.nan
    return 1.4826 * float(np.median(np.concatenate(deviations))) * 1.2  # small-sample bias


def shrunk(
    coords: Sequence[dict[str, object]],
    scores: Sequence[float],
    counts: Sequence[int],
    spread: float,
) -> np.ndarray:
    """Each visit's estimate: its pooled score shrunk toward the leave-one-out model.

    Parameters
    ----------
    coords
        Each visit's coordinates (parameter -> value).
    scores
        Each visit's pooled log score.
    counts
        Repeats pooled in each score.
    spread
        Standard deviation of one repeat's log score (:func:`repeat_spread`).

    Returns
    -------
    numpy.ndarray
        The estimates, in the order given; the scores themselves when there are
        too few visits to fit the model or no spread to judge noise by.
    """
    y = np.asarray(scores, dtype=float)
    x = _design(coords)
    if not math.isfinite(spread) or spread <= 0 or len(y) < MIN_VISITS:
        return y
    noise = MEDIAN_VARIANCE * spread**2 / np.maximum(np.asarray(counts, dtype=float), 1.0)
    center = y.mean()
    gram = x.T @ x + RIDGE * np.eye(x.shape[1])
    hat = x @ np.linalg.solve(gram, x.T)
    fitted = center + hat @ (y - center)
    leave = np.clip(1.0 - np.diag(hat), 0.05, None)
    residual = (y - fitted) / leave
    predicted = y - residual
    # median, not mean: the lucky visits the estimate is for must not set the misfit
    typical = float(np.median(residual**2)) / CHI2_MEDIAN
    misfit = max(typical - float(np.mean(noise)), 0.25 * float(np.mean(noise)))
    return (y / noise + predicted / misfit) / (1.0 / noise + 1.0 / misfit)


def _design(coords: Sequence[dict[str, object]]) -> np.ndarray:
    """One indicator column per (parameter, value) seen: the additive effects."""
    columns = sorted({(k, str(v)) for c in coords for k, v in c.items()})
    where = {key: j for j, key in enumerate(columns)}
    x = np.zeros((len(coords), len(columns)))
    for i, c in enumerate(coords):
        for k, v in c.items():
            x[i, where[(k, str(v))]] = 1.0
    return x
