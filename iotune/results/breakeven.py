"""After how many reads a way that costs more to make pays for itself, from the repeats.

Two ways of reading the same data, ``a`` costing more to make than ``b`` (a rewrite
against references, references against the file as it is), break even after

    n = (one-off_a - one-off_b) / (per-read_b - per-read_a)

reads: the medians over repeats of the one-off seconds (a trial's write: building the
references, rewriting the data; nothing for the file as it is) and of the seconds a
read takes (a pattern's whole read, or a call of the user's code; several patterns: one
read of each, their medians summed).  ``a`` never pays when it reads no faster.  The
interval resamples every side's repeats as :func:`iotune.measuring.ratio.ratio_interval`
does (seeded), so a results file always gives the same one; a resample in which ``a``
reads no faster counts as never.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iotune.measuring.ratio import CONFIDENCE, RESAMPLES, SEED

METHOD = (
    "break-even reads n = (one-off seconds of the way costing more to make - the other's) / "
    "(the other's seconds a read - its own), medians over repeats (several patterns: one "
    f"read of each, medians summed); interval: {CONFIDENCE:.0%} percentile bootstrap of n "
    f"({RESAMPLES} resamples of every side's repeats, seeded; a resample reading no faster "
    "is never)"
)

#: the repeats of one series: seconds, NaN for a repeat that failed
Series = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class BreakEven:
    """The reads after which the way costing more to make pays for itself.

    ``reads`` is ``inf`` when it reads no faster (never), ``low``/``high`` the
    interval (NaN: a side with one repeat; ``high`` ``inf``: some resamples never
    pay), ``extra_s`` its one-off seconds beyond the other's and ``saved_s`` the
    seconds it saves each read (median; zero or less: never).
    """

    reads: float
    low: float
    high: float
    extra_s: float
    saved_s: float

    @property
    def never(self) -> bool:
        """It reads no faster, so its one-off cost is never paid back."""
        return math.isinf(self.reads)


def break_even(
    one_off_a: Series | None,
    one_off_b: Series | None,
    reads_a: Sequence[Series],
    reads_b: Sequence[Series],
    *,
    seed: int = SEED,
) -> BreakEven:
    """The break-even of ``a`` (costing more to make) against ``b``.

    Parameters
    ----------
    one_off_a, one_off_b
        Each repeat's one-off seconds; None: nothing to make (the file as it is).
    reads_a, reads_b
        Per pattern, each repeat's seconds a read (the same patterns in the same order).
    seed
        Of the bootstrap's generator.

    Returns
    -------
    BreakEven
    """
    made_a, made_b = _clean(one_off_a), _clean(one_off_b)
    read_a, read_b = [_clean(r) for r in reads_a], [_clean(r) for r in reads_b]
    extra = _median(made_a) - _median(made_b)
    saved = sum(map(_median, read_b)) - sum(map(_median, read_a))
    reads = _reads(np.array(extra), np.array(saved)).item()
    series = [s for s in (made_a, made_b, *read_a, *read_b) if s is not None]
    if any(s.size < 2 for s in series):  # one repeat: nothing to resample
        return BreakEven(reads, math.nan, math.nan, extra, saved)
    rng = np.random.default_rng(seed)
    extras = _resampled(made_a, rng) - _resampled(made_b, rng)
    saves = np.sum([_resampled(r, rng) for r in read_b], axis=0) - np.sum(
        [_resampled(r, rng) for r in read_a], axis=0
    )
    tail = (1 - CONFIDENCE) / 2
    # no interpolation: between a finite resample and a never one there is no number
    low, high = np.quantile(_reads(extras, saves), [tail, 1 - tail], method="inverted_cdf")
    return BreakEven(reads, float(min(low, reads)), float(max(high, reads)), extra, saved)


def _reads(extra: np.ndarray, saved: np.ndarray) -> np.ndarray:
    """``extra / saved`` reads, never below zero; ``inf`` where nothing is saved."""
    with np.errstate(divide="ignore", invalid="ignore"):
        found = np.where(saved > 0, np.maximum(extra, 0) / np.where(saved > 0, saved, 1), np.inf)
    return np.asarray(found, dtype=float)


def _clean(values: Series | None) -> np.ndarray | None:
    if values is None:
        return None
    found = np.asarray(values, dtype=float).ravel()
    return found[~np.isnan(found)]


def _median(values: np.ndarray | None) -> float:
    """The median; nothing to make costs nothing; no repeat measured: NaN."""
    if values is None:
        return 0.0
    return float(np.median(values)) if values.size else math.nan


def _resampled(values: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """The medians of :data:`RESAMPLES` resamples of ``values`` (zeros: nothing to make)."""
    if values is None:
        return np.zeros(RESAMPLES)
    return np.median(rng.choice(values, size=(RESAMPLES, values.size)), axis=1)
