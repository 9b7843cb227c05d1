"""How much faster a configuration reads than each named baseline, with an interval.

The speedup of a configuration over a baseline, per read pattern, is the ratio
of their median read throughputs over repeats (the same bytes are read, so it
is also the ratio of read times).  Its interval is a percentile bootstrap of
that ratio: both sets of repeats resampled with replacement, seeded, so a
result file always gives the same interval
(:func:`iotune.measuring.ratio.ratio_interval`, the comparison every tie makes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from iotune.measuring.ratio import CONFIDENCE, RESAMPLES, ratio_interval
from iotune.results.baselines import DIM, has_baselines
from iotune.results.percall import per_call

if TYPE_CHECKING:
    import xarray as xr

METHOD = (
    f"speedup = median read MiB/s of the configuration / the baseline's, over repeats "
    "(for the user's own code, calls a second: the baseline's seconds a call / the "
    "configuration's); "
    f"interval: {CONFIDENCE:.0%} percentile bootstrap of that ratio ({RESAMPLES} resamples "
    "of both sides' repeats, seeded), widened to hold the ratio itself when very few "
    "repeats leave it outside; size_ratio = the configuration's stored bytes / the baseline's"
)


#: the key of ``chosen`` (and ``pattern`` of a row) that compares writes, not a read pattern
WRITE = "write"


def vs_baselines(ds: xr.Dataset, chosen: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The speedup of the chosen configuration over each measured baseline, per pattern.

    Parameters
    ----------
    ds
        Results with baselines (none: an empty list).
    chosen
        Per read pattern, the swept coordinates of the configuration compared
        (the recommended one for every pattern, or each pattern's own best).

    Returns
    -------
    list of dict
        ``{baseline, pattern, speedup, low, high, size_ratio}`` for each baseline
        measured on the configuration's backend and each pattern, in that order;
        ``size_ratio`` is the configuration's stored size over the baseline's.
    """
    if not has_baselines(ds) or "read_MiBps" not in ds:
        return []
    found = []
    for label in (str(v) for v in ds[DIM].values):
        base = ds.sel({DIM: label})
        if str(base["baseline_status"].values) != "ok":
            continue
        for pattern, coords in chosen.items():
            if str(base["baseline_backend"].values) != _backend(ds, coords):
                continue
            here = {k: v for k, v in coords.items() if k in ds["read_MiBps"].dims}
            point = ds.sel(here)
            # the user's own code: calls a second (its bytes differ by layout); results of
            # earlier releases kept no baseline time, so their MiB/s as they showed it
            calls = per_call(ds, f"read:{pattern}") and "baseline_read_s" in base
            if pattern == WRITE:  # the cost of the pick when the data is written
                if "write_MiBps" not in ds or "baseline_write_MiBps" not in base:
                    continue
                best, theirs = point["write_MiBps"].values, base["baseline_write_MiBps"].values
            elif calls:
                best = 1 / point["read_s"].sel(pattern=pattern).values
                theirs = 1 / base["baseline_read_s"].sel(pattern=pattern).values
            else:
                best = point["read_MiBps"].sel(pattern=pattern).values
                theirs = base["baseline_read_MiBps"].sel(pattern=pattern).values
            size = float(point["file_bytes"].values) / float(base["baseline_file_bytes"].values)
            row = _row(label, pattern, ratio_interval(best, theirs), size)
            found.append(row | {"per_call": True} if calls else row)
    return found


def _row(
    label: str, pattern: str, interval: tuple[float, float, float], size: float
) -> dict[str, Any]:
    """One row of :func:`vs_baselines` and :func:`vs_point`."""
    speed, low, high = interval
    return {
        "baseline": label,
        "pattern": pattern,
        "speedup": speed,
        "low": low,
        "high": high,
        "size_ratio": size,
    }


def vs_point(
    ds: xr.Dataset, coords: Mapping[str, Any], base: Mapping[str, Any], *, label: str
) -> list[dict[str, Any]]:
    """The speedup of one measured point over another of the sweep, on every metric.

    The rows of :func:`vs_baselines` (``baseline`` is ``label``), for the write and
    each read pattern both points measured: the pick's whole cost against a grid
    point (the sweep's baseline, or the application's own settings).
    """
    grid = ds.iotune.dense()  # a search's visited points as a grid: selected like one
    here, there = grid.sel(dict(coords)), grid.sel(dict(base))
    size = _one(here, "file_bytes") / _one(there, "file_bytes")
    found = []
    for metric in ds.iotune.metrics:
        best, theirs = here.iotune.metric(metric), there.iotune.metric(metric)
        if best.size != best.sizes.get("repeat", 1) or theirs.size != theirs.sizes.get("repeat", 1):
            continue  # not one point: a dimension the sweep did not name (never pooled)
        interval = ratio_interval(best.values.ravel(), theirs.values.ravel())
        if math.isnan(interval[0]):  # a pattern one of them did not measure
            continue
        pattern = WRITE if metric == WRITE else metric.removeprefix("read:")
        found.append(_row(label, pattern, interval, size))
    return found


def _one(point: xr.Dataset, name: str) -> float:
    """The single value of ``name`` at a point (NaN: not recorded, or not one value)."""
    if name not in point:
        return math.nan
    values = point[name].values.ravel()
    return float(values[0]) if values.size == 1 else math.nan


def fastest_labels(ds: xr.Dataset, chosen: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Per pattern of :func:`each_best`, ``the fastest on read:<pattern> (<its label>)``."""
    from iotune.results.labels import label

    return {p: f"the fastest on {metric_name(p)} ({label(c)})" for p, c in chosen.items()}


def each_best(ds: xr.Dataset) -> dict[str, dict[str, Any]]:
    """Per read pattern, the coordinates of its best configuration (none for a failed pattern)."""
    from iotune.core.errors import RecommendError

    chosen = {}
    for pattern in ds.iotune.patterns:
        try:
            chosen[pattern] = ds.iotune.best(f"read:{pattern}").coords
        except RecommendError:  # nothing succeeded for this pattern
            continue
    return chosen


def not_measured(ds: xr.Dataset) -> list[str]:
    """One line per baseline that was not measured, with why."""
    if not has_baselines(ds):
        return []
    lines = []
    for label in (str(v) for v in ds[DIM].values):
        base = ds.sel({DIM: label})
        status = str(base["baseline_status"].values)
        if status != "ok":
            lines.append(f"{label}: {status}: {base['baseline_error'].values}")
    return lines


def layouts(ds: xr.Dataset) -> dict[str, str]:
    """``{baseline: "chunks=... codec=..."}``: what each measured baseline laid out."""
    if not has_baselines(ds):
        return {}
    return {
        str(
            label
        ): f"chunks={ds['baseline_chunks'].values[i]} codec={ds['baseline_codec'].values[i]}"
        for i, label in enumerate(ds[DIM].values)
        if str(ds["baseline_status"].values[i]) == "ok"
    }


def _backend(ds: xr.Dataset, coords: Mapping[str, Any]) -> str:
    if "backend" in coords:
        return str(coords["backend"])
    return str(ds.attrs.get("backends", "")).split()[0] if ds.attrs.get("backends") else ""


def _ratio_of(rows: list[dict[str, Any]]) -> str:
    """``MiB/s``, or ``speed`` when a row is the user's own code (calls a second)."""
    return "speed" if any(r.get("per_call") for r in rows) else "MiB/s"


def speedup_text(
    rows: list[dict[str, Any]],
    *,
    layouts: Mapping[str, str],
    missing: list[str],
    what: str,
    configs: Mapping[str, str] | None = None,
) -> list[str]:
    """Lines for a terminal: per baseline (and its layout), the speedup per pattern.

    ``what`` names the configuration compared ("the pick (chunks=...)", "each pattern's
    best").  ``configs``: per pattern, the label of the configuration of its row when
    they differ ("the fastest on read:timeseries (chunks=...)"), so that no row can be
    read as another configuration's; said at the end of the row.
    """
    if not rows and not missing:
        return []
    lines = [
        f"speedup of {what} over the baselines (median {_ratio_of(rows)} ratio, "
        f"{CONFIDENCE:.0%} bootstrap interval; size: stored bytes relative to the baseline's):"
    ]
    for label in dict.fromkeys(r["baseline"] for r in rows):
        lines.append(f"  {label} ({layouts.get(label, '?')})")
        for r in (r for r in rows if r["baseline"] == label):
            # the baseline's layout is not among the grid's, so it can win
            verb = "writes" if r["pattern"] == WRITE else "reads"
            beaten = f"  the baseline {verb} faster" if r["high"] < 1 else ""
            who = (configs or {}).get(r["pattern"])
            which = f"  {who}" if who else ""
            lines.append(
                f"    {metric_name(r['pattern']):<19} {times(r['speedup']):>8}  "
                f"{interval_text(r['low'], r['high'])}  size {times(r['size_ratio'])}"
                f"{beaten}{which}"
            )
    lines += [f"  not measured: {line}" for line in missing]
    return lines


def interval_text(low: float, high: float) -> str:
    """``[1.1x to 1.3x]``; ``[n=1, no interval]`` where a side had one repeat (NaN bounds)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "[n=1, no interval]"
    return f"[{times(low)} to {times(high)}]"


def times(value: float) -> str:
    """A speedup or size ratio as ``1.23x`` (three significant digits, ``1234x`` whole,
    never in exponent notation; ``?`` when unknown)."""
    if not math.isfinite(value):
        return "?"
    return f"{value:.0f}x" if abs(value) >= 1000 else f"{value:.3g}x"


def metric_name(pattern: str) -> str:
    """The metric a row's ``pattern`` is: ``write``, else ``read:<pattern>``."""
    return pattern if pattern == WRITE else f"read:{pattern}"
