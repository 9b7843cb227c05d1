"""A user's function is judged by its seconds per call: which metrics, their unit, their figures.

A read pattern that is the user's own code (:func:`iotune.results.objective.own_patterns`)
counts the bytes that came from storage, and those differ by layout: a compressed
file reads fewer, so bytes over seconds would penalise compression.  What a person
judges such a function by is how long one call takes, the same at every layout.  Its
metric ``read:<name>`` is therefore **calls per second** (1 / seconds a call, read from
``read_s``: one call per repeat): higher is better, so ranking, ties, intervals and
speedups work as for MiB/s; the commands say it back as seconds per call.

Built-in patterns count the raw bytes of their selection, the same at every point, so
their MiB/s ranks exactly as their time does and stays their figure.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.core.units import format_duration
from iotune.results.objective import intervals as rate_intervals
from iotune.results.objective import own_patterns

if TYPE_CHECKING:
    import xarray as xr

#: the unit of a metric measured as bytes over seconds, and of one measured per call
RATE, CALLS = "MiB/s", "calls/s"


def per_call(ds: xr.Dataset, metric: str) -> bool:
    """Whether ``metric`` is ranked by calls per second: a read of the user's own code."""
    return metric.startswith("read:") and metric[5:] in own_patterns(ds) and "read_s" in ds


def unit(ds: xr.Dataset, metric: str) -> str:
    """The unit of ``ds.iotune.metric(metric)``: :data:`CALLS` or :data:`RATE`."""
    return CALLS if per_call(ds, metric) else RATE


def units(ds: xr.Dataset, metrics: Any) -> dict[str, str]:
    """:func:`unit` of each of ``metrics``."""
    return {m: unit(ds, m) for m in metrics}


def extras(ds: xr.Dataset, point: xr.Dataset, metrics: Any) -> dict[str, Any]:
    """A :class:`~iotune.results.objective.Candidate`'s ``units`` and ``from_storage``.

    ``from_storage``: the median MiB/s of each calls/s metric at ``point`` (what came
    from storage over the time: information beside the time a call).
    """
    found = units(ds, metrics)
    storage = {}
    for metric in (m for m, u in found.items() if u == CALLS and "read_MiBps" in point):
        rate = point["read_MiBps"].sel(pattern=metric[5:]).values.ravel()
        rate = rate[np.isfinite(rate)]
        storage[metric] = float(np.median(rate)) if rate.size else math.nan
    return {"units": found, "from_storage": storage}


def calls_per_second(ds: xr.Dataset, pattern: str) -> xr.DataArray:
    """``1 / read_s`` at ``pattern`` (each repeat is one call), labelled as calls/s."""
    seconds = ds["read_s"].sel(pattern=pattern)
    calls = 1.0 / seconds.where(seconds > 0)
    calls.attrs = {"units": CALLS, "long_name": f"calls of {pattern} per second (1 / s a call)"}
    return calls.rename("read_calls_per_s")


def intervals(flat: xr.Dataset, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """A metric's 95 % interval of the median at every point (NaN without one).

    A per-call metric's interval is the same order statistics of its repeats as the
    stored MiB/s interval is of theirs (:func:`iotune.measuring.precision.median_interval`),
    taken of the calls per second; any other metric's is the stored one.
    """
    if not per_call(flat, metric):
        return rate_intervals(flat, metric)
    from iotune.measuring.precision import median_interval

    calls = flat.iotune.metric(metric)
    values = calls.transpose("point", ...).values.reshape(flat.sizes["point"], -1)
    low, high = np.full(len(values), np.nan), np.full(len(values), np.nan)
    for i, row in enumerate(values):
        found = median_interval(row.tolist())
        if found is not None:
            low[i], high[i] = found
    return low, high


def a_call(calls: float) -> str:
    """Calls per second as a person reads them: ``"163 ms a call"``."""
    return f"{format_duration(1.0 / calls)} a call" if calls > 0 else "no call measured"


def said(time: dict[str, float]) -> str:
    """``"163 ms a call [150 ms to 170 ms]"``: seconds a call (``median``, ``low``, ``high``)."""
    span = ""
    if math.isfinite(time["low"]) and math.isfinite(time["high"]):
        span = f" [{format_duration(time['low'])} to {format_duration(time['high'])}]"
        if time["low"] == time["high"]:  # one repeat (a stopped run's partial point)
            span = " [n=1, no interval]"
    return f"{format_duration(time['median'])} a call{span}"
