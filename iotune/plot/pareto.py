"""Stored size against throughput, with the Pareto frontier marked and labelled."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from iotune.core.errors import ResultsError
from iotune.plot._common import (
    _MARKERS,
    _footnote,
    _legend_handles,
    _metric,
    _no_data,
    _per_point,
    _rate_ticks,
    _side_legend,
    _size_ticks,
    _styles,
    _suptitle,
    _time_axis,
    _title,
    _value_labels,
    _without_nowhere,
)
from iotune.results.partial import usable
from iotune.results.summary import mib_per_read

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_MAX_ANNOTATIONS = 12
_ANNOTATION: dict[str, Any] = {"textcoords": "offset points", "va": "bottom", "fontsize": 7}


def size_vs_throughput(
    ds: xr.Dataset, *, metric: str = "write", pattern: str | None = None
) -> Figure:
    """Scatter stored size against median throughput and mark the Pareto frontier.

    One marker per successful grid point, coloured by ``codec`` (else the first swept dim)
    and shaped by a second swept dim.  The frontier (points no other point beats in both
    size and speed) is a step line, and its points are annotated with their settings.

    Parameters
    ----------
    ds
        Results Dataset (schema version 1) with ``file_bytes``.
    metric
        ``"write"`` or ``"read"``.
    pattern
        Read pattern, required for ``metric="read"``.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ResultsError
        Unknown metric or pattern, or a missing variable.
    """
    ds = ds.iotune.dense()  # a search's sparse points as the grid of their values
    ds, left_out = _without_nowhere(ds)
    from matplotlib.figure import Figure

    da, ylabel = _metric(ds, metric, pattern)
    if "file_bytes" not in ds:
        raise ResultsError("the results have no 'file_bytes' variable to plot sizes from")
    params = [str(d) for d in da.dims if d != "repeat"]
    median = da.iotune.median().transpose(*params)
    size = _per_point(ds["file_bytes"], median).astype(float).ravel()  # bytes
    xy = np.vstack([size, median.values.ravel()])
    ok = np.isfinite(xy).all(axis=0)
    if "status" in ds:
        # partial points (a stopped run) only where none is complete, as a ranking takes them
        ok &= usable(_per_point(ds["status"], median).astype(str).ravel())
    index, names = _grid_points(da, params)
    fig = Figure(figsize=(8.5, 5.5), layout="constrained")
    ax = fig.subplots()
    # a small-read pattern's throughput is also a time per read, as the commands show it
    per = mib_per_read(ds, f"read:{pattern}") if metric == "read" else None
    _scatter_groups(ax, da, index=index, xy=xy, ok=ok, past_time_axis=per is not None)
    if ok.any():
        _draw_frontier(ax, xy[:, ok], [n for n, k in zip(names, ok, strict=True) if k])
    else:
        _no_data(ax)
    _size_ticks(ax.xaxis)  # after the scales are chosen: choosing one resets its ticks
    _rate_ticks(ax.yaxis)
    _time_axis(ax, per)
    ax.set_xlabel("stored size")
    ax.set_ylabel(f"median {ylabel}")
    ax.grid(alpha=0.3)
    what = "seconds a call" if da.attrs.get("units") == "calls/s" else "throughput"
    _suptitle(fig, _title(ds, f"stored size vs {metric} {what}", pattern))
    _footnote(fig, left_out)
    return fig


def _grid_points(da: xr.DataArray, params: list[str]) -> tuple[np.ndarray, list[str]]:
    """Per grid point in ``ravel()`` order: its index along each param, and its label."""
    shape = [da.sizes[d] for d in params]
    index = np.array(list(np.ndindex(*shape)), dtype=int).reshape(math.prod(shape), len(params))
    labels = [_value_labels(da[d]) for d in params]
    names = [" / ".join(lab[i] for lab, i in zip(labels, row, strict=True)) for row in index]
    return index, names


def _scatter_groups(
    ax: Axes,
    da: xr.DataArray,
    *,
    index: np.ndarray,
    xy: np.ndarray,
    ok: np.ndarray,
    past_time_axis: bool,
) -> None:
    """Colour points by ``codec`` (else the first param), shape them by a second param."""
    params = [str(d) for d in da.dims if d != "repeat"]
    color = "codec" if "codec" in params else (params[0] if params else None)
    rest = [p for p in params if p != color and da.sizes[p] <= len(_MARKERS)]
    marker = "chunks" if "chunks" in rest else (rest[0] if rest else None)
    ci, mi = (index[:, params.index(d)] if d else np.zeros(len(ok), int) for d in (color, marker))
    colors = [c for c, _ in _styles(da.sizes[color] if color else 1)]
    for c, m in sorted(set(zip(ci[ok].tolist(), mi[ok].tolist(), strict=True))):
        sel = ok & (ci == c) & (mi == m)
        ax.scatter(*xy[:, sel], color=colors[c], marker=_MARKERS[m], alpha=0.85)
    legends = [(color, "upper", [(c, "o") for c in colors])]
    legends.append((marker, "lower", [("gray", m) for m in _MARKERS]))
    for dim, where, styles in legends:
        if dim:
            handles = _legend_handles(_value_labels(da[dim]), styles, line=False)
            _side_legend(ax, handles, title=dim, where=where, past_time_axis=past_time_axis)


def _pareto_mask(size: np.ndarray, speed: np.ndarray) -> np.ndarray:
    """True where no other point is as small and as fast and better in one; one of twins."""
    mask = np.zeros(size.shape, dtype=bool)
    best = -np.inf
    # Smallest first, fastest first among equal sizes: a point is on the frontier exactly
    # when it is faster than everything no larger than it.
    for i in np.lexsort((-speed, size)):
        if speed[i] > best:
            mask[i] = True
            best = speed[i]
    return mask


def _draw_frontier(ax: Axes, xy: np.ndarray, names: list[str]) -> None:
    size, speed = xy
    mask = _pareto_mask(size, speed)
    order = np.flatnonzero(mask)[np.argsort(size[mask])]
    # "post": the best speed reachable within a size budget holds until the next point.
    ax.step(size[order], speed[order], where="post", color="black", lw=1, label="Pareto frontier")
    ax.scatter(size[order], speed[order], s=110, facecolors="none", edgecolors="black", lw=1)
    ax.legend(loc="best", fontsize="small")
    ax.margins(0.08)
    for values, set_scale in ((size, ax.set_xscale), (speed, ax.set_yscale)):
        good = values[values > 0]
        if good.size and good.max() > 100 * good.min():
            set_scale("log")
    scale = np.log10 if ax.get_xscale() == "log" else np.asarray
    left, right = scale(ax.get_xlim())
    for i in order[:_MAX_ANNOTATIONS]:
        # Just above a frontier point, on either side, no point can lie (it would dominate
        # it or be on the frontier itself), so labels go there, towards the middle.
        to_left = scale(size[i]) > (left + right) / 2
        dx, ha = (-6, "right") if to_left else (6, "left")
        ax.annotate(names[i], (size[i], speed[i]), (dx, 4), ha=ha, **_ANNOTATION)
