"""Statistics over repeats, one implementation for every reader: NaN-aware and warning-free.

Reached through ``ds.iotune.median()`` and ``da.iotune.spread()`` (:mod:`iotune.results.accessor`).
"""

from __future__ import annotations

from typing import Any

import numpy as np


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


def spread(a: Any, axis: int | tuple[int, ...] = -1) -> tuple[np.ndarray, ...]:
    """Median, minimum and maximum along ``axis``, ignoring NaN; all-NaN slices give NaN."""
    a = _last(a, axis)
    return nanmedian(a), np.fmin.reduce(a, axis=-1), np.fmax.reduce(a, axis=-1)


def _last(a: Any, axis: int | tuple[int, ...]) -> np.ndarray:
    """``a`` with the axes ``axis`` flattened into the last one."""
    a = np.asarray(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    a = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    return a.reshape(*a.shape[: a.ndim - len(axes)], -1)
