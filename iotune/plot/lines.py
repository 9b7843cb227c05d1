"""Throughput against one swept parameter: median markers, min-max bars, facets."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from iotune.core.errors import ResultsError
from iotune.plot._common import (
    _footnote,
    _legend_handles,
    _metric,
    _no_data,
    _panel_grid,
    _rate_ticks,
    _side_legend,
    _Style,
    _styles,
    _suptitle,
    _time_axis,
    _title,
    _value_labels,
    _without_nowhere,
)
from iotune.plot.noise import draw_floor
from iotune.results.summary import mib_per_read

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_PANELS = 12
"""Most facet panels in one throughput figure; further facet dims are reduced by the median."""


def throughput(
    ds: xr.Dataset,
    *,
    metric: str = "write",
    pattern: str | None = None,
    x: str | None = None,
    hue: str | None = None,
    logy: bool | None = None,
) -> Figure:
    """Plot throughput against one swept parameter, one line per value of another.

    Markers are the median over repeats, error bars span the minimum to the maximum.  The
    other swept parameters become facets, one panel per combination; beyond
    :data:`MAX_PANELS` panels the extra dims are reduced by the median, as the title says.
    Failed points are NaN and simply missing.

    Parameters
    ----------
    ds
        Results Dataset (schema version 1).
    metric
        ``"write"`` (``write_MiBps``) or ``"read"`` (``read_MiBps`` at ``pattern``).
    pattern
        Read pattern, required for ``metric="read"``.
    x
        Swept dim on the x axis; default ``chunks`` if swept, else the one with most values.
    hue
        Swept dim with one line per value; default ``codec`` if swept, else the next one.
    logy
        Log y axis; ``None`` chooses it when the values span more than 100x.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ResultsError
        Unknown metric or pattern, a missing variable, or ``x``/``hue`` not swept.
    """
    ds = ds.iotune.dense()  # a search's sparse points as the grid of their values
    ds, left_out = _without_nowhere(ds)
    da, ylabel = _metric(ds, metric, pattern)
    x, hue = _pick_x_hue(da, x, hue)
    others = [str(d) for d in da.dims if d not in (x, hue, "repeat")]
    da, facets, reduced = _limit_facets(da, others)
    what = "calls per second" if da.attrs.get("units") == "calls/s" else "throughput"
    title = _title(ds, f"{metric} {what}", pattern)
    if reduced:
        title += f" (median over {', '.join(reduced)})"
    title += f"\nmarkers: median of {da.sizes['repeat']} repeats, bars: min to max"
    if x is None:
        fig = _single_bar(da, ylabel=ylabel, title=title)
        _footnote(fig, left_out)
        return fig
    panels = list(_facet_panels(da, facets))
    fig, axes, ncols = _panel_grid(len(panels), n_x=da.sizes[x], legend=hue is not None)
    hue_labels = _value_labels(da[hue]) if hue else [""]
    styles = _styles(len(hue_labels))
    spans = []
    floor = ds.iotune.noise.get(f"read:{pattern}" if metric == "read" else metric)
    if floor is not None:
        title += f"; shaded: noise floor ({floor:.0%}) below the best"
    for i, (ax, (panel_title, sub)) in enumerate(zip(axes, panels, strict=True)):
        spans.append(_draw_panel(ax, sub, x=x, hue=hue, styles=styles))
        draw_floor(ax, float(sub.iotune.median().max()), floor)
        ax.set_title(panel_title, fontsize="medium")
        if i % ncols == 0:
            ax.set_ylabel(ylabel)
        if i + ncols >= len(panels):  # nothing below this panel
            ax.set_xlabel(x)
    _scale_y(axes, np.concatenate(spans), logy=logy)
    # a small-read pattern's throughput is also a time per read, as the commands show it
    per = mib_per_read(ds, f"read:{pattern}") if metric == "read" else None
    timed = False
    for i, ax in enumerate(axes):
        _rate_ticks(ax.yaxis)
        if (i + 1) % ncols == 0 or i == len(axes) - 1:  # the right of each row
            timed |= _time_axis(ax, per)
    if hue:
        handles = _legend_handles(hue_labels, styles)
        _side_legend(axes[ncols - 1], handles, title=hue, past_time_axis=timed)
    _suptitle(fig, title)
    _footnote(fig, left_out)
    return fig


def _pick_x_hue(da: xr.DataArray, x: str | None, hue: str | None) -> tuple[str | None, str | None]:
    params = [str(d) for d in da.dims if d != "repeat"]
    for role, name in (("x", x), ("hue", hue)):
        if name is not None and name not in params:
            raise ResultsError(f"{role}={name!r} is not a swept parameter; swept: {params}")
    if x is not None and x == hue:
        raise ResultsError(f"x and hue must differ, both are {x!r}")
    if x is None:
        rest = [p for p in params if p != hue]
        if not rest:
            return hue, None
        x = "chunks" if "chunks" in rest else max(rest, key=lambda d: da.sizes[d])
    if hue is None:
        rest = [p for p in params if p != x]
        hue = "codec" if "codec" in rest else (rest[0] if rest else None)
    return x, hue


def _limit_facets(da: xr.DataArray, facets: list[str]) -> tuple[xr.DataArray, list[str], list[str]]:
    kept, n = [], 1
    for d in facets:
        if n * da.sizes[d] <= MAX_PANELS:
            kept.append(d)
            n *= da.sizes[d]
    reduced = [d for d in facets if d not in kept]
    if reduced:
        da = da.stack(_reduced=reduced).iotune.median("_reduced")
    return da, kept, reduced


def _facet_panels(da: xr.DataArray, facets: list[str]) -> Iterator[tuple[str, xr.DataArray]]:
    labels = {d: _value_labels(da[d]) for d in facets}
    for idx in itertools.product(*(range(da.sizes[d]) for d in facets)):
        title = ", ".join(f"{d}={labels[d][i]}" for d, i in zip(facets, idx, strict=True))
        yield title, da.isel(dict(zip(facets, idx, strict=True)))


def _draw_panel(
    ax: Axes, sub: xr.DataArray, *, x: str, hue: str | None, styles: list[_Style]
) -> np.ndarray:
    """Per hue value, medians joined by a line with min-max error bars.

    Returns the extremes drawn, for choosing the y scale.
    """
    med, lo, hi = (a.transpose(*[d for d in (hue, x) if d]).values for a in sub.iotune.spread())
    if hue is None:
        med, lo, hi = med[None], lo[None], hi[None]
    n_hue, n_x = med.shape
    positions = np.arange(n_x, dtype=float)
    # Dodge the lines sideways so error bars of different hues at one tick do not overlap.
    step = min(0.6 / n_hue, 0.15)
    hue_labels = _value_labels(sub[hue]) if hue else [None]
    for i, ((color, marker), label) in enumerate(zip(styles, hue_labels, strict=False)):
        if np.isfinite(med[i]).any():
            yerr = np.vstack([med[i] - lo[i], hi[i] - med[i]])
            shifted = positions + (i - (n_hue - 1) / 2) * step
            style: dict[str, Any] = {"color": color, "marker": marker, "markersize": 5}
            style["capsize"] = 3
            ax.errorbar(shifted, med[i], yerr=yerr, label=label, **style)
    if not np.isfinite(med).any():
        _no_data(ax)
    labels = _value_labels(sub[x])
    rotate = n_x * max(map(len, labels)) > 36  # long labels would run into each other
    tilt: dict[str, Any] = {"rotation": 30, "ha": "right"} if rotate else {}
    ax.set_xticks(positions, labels, **tilt)
    ax.set_xlim(-0.5, n_x - 0.5)
    ax.grid(axis="y", alpha=0.3)
    return np.concatenate([lo.ravel(), hi.ravel()])


def _scale_y(axes: list[Axes], values: np.ndarray, *, logy: bool | None) -> None:
    good = values[np.isfinite(values) & (values > 0)]
    if logy is None:
        logy = good.size > 0 and good.max() > 100 * good.min()
    for ax in axes:
        if logy:
            ax.set_yscale("log")
        elif good.size:
            ax.set_ylim(bottom=0)  # throughputs compare fairly only against zero


def _single_bar(da: xr.DataArray, *, ylabel: str, title: str) -> Figure:
    """Nothing was swept: one bar with the min-max spread of the repeats."""
    fig, (ax,), _ = _panel_grid(1, n_x=1, legend=False)
    med, lo, hi = (float(a) for a in da.iotune.spread())
    if math.isfinite(med):
        ax.bar([0], [med], yerr=[[med - lo], [hi - med]], width=0.5, capsize=8, color="C0")
        ax.set_ylim(bottom=0)
        _rate_ticks(ax.yaxis)
    else:
        _no_data(ax)
    ax.set_xticks([0], ["single configuration"])
    ax.set_xlim(-1, 1)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    _suptitle(fig, title)
    return fig
