"""Heatmaps of throughput over two swept parameters, one panel per read pattern."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from iotune.core.errors import ResultsError
from iotune.core.units import format_duration, format_number
from iotune.plot._common import (
    _footnote,
    _metric,
    _no_data,
    _rate_ticks,
    _suptitle,
    _title,
    _value_labels,
    _without_nowhere,
)
from iotune.results.summary import mib_per_read

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

REDUCTIONS = ("max", "median")
_MAX_ANNOTATED_CELLS = 150


def heatmap(
    ds: xr.Dataset,
    *,
    metric: str = "read",
    x: str | None = None,
    y: str | None = None,
    reduce: str = "max",
) -> Figure:
    """Colour the median throughput over two swept parameters; one panel per pattern.

    Each cell is the median over repeats.  Swept parameters other than ``x`` and ``y``
    are reduced per cell: ``"max"`` shows the best any of their values reached (what the
    pair can do with the rest chosen well), ``"median"`` the typical value; the title
    says which.  Every panel has its own colour bar, since patterns differ by orders of
    magnitude; empty cells (failed or not applicable) stay blank.

    Parameters
    ----------
    ds
        Results Dataset (schema version 1).
    metric
        ``"read"`` (a panel per pattern) or ``"write"`` (one panel).
    x, y
        Swept parameters on the columns and rows; default ``chunks`` and ``codec``
        when swept, else the parameters with most values.  With a single swept
        parameter the map has one row.
    reduce
        ``"max"`` or ``"median"``, applied over the remaining swept parameters.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ResultsError
        Unknown metric or reduction, nothing swept, or ``x``/``y`` not swept.
    """
    ds = ds.iotune.dense()  # a search's sparse points as the grid of their values
    ds, left_out = _without_nowhere(ds)
    from matplotlib.figure import Figure

    if reduce not in REDUCTIONS:
        raise ResultsError(f"reduce must be one of {list(REDUCTIONS)}, got {reduce!r}")
    panels = _panels(ds, metric)
    params = [str(d) for d in panels[0][1].dims if d != "repeat"]
    x, y = _pick_axes(params, panels[0][1], x, y)
    rest = [p for p in params if p not in (x, y)]
    ncols = min(len(panels), 2)
    nrows = math.ceil(len(panels) / ncols)
    n_x, n_y = panels[0][1].sizes[x], panels[0][1].sizes[y] if y else 1
    width = min(9.0, 2.6 + 0.9 * n_x)
    height = min(7.0, 1.6 + 0.45 * n_y)
    fig = Figure(figsize=(width * ncols, height * nrows + 0.8), layout="constrained")
    axes = list(fig.subplots(nrows, ncols, squeeze=False).ravel())
    for ax in axes[len(panels) :]:
        ax.remove()
    for ax, (label, da, cbar_label, per) in zip(axes, panels, strict=False):
        median = da.iotune.median()
        if rest:
            stacked = median.stack(_rest=rest)
            if reduce == "max":
                median = stacked.reduce(np.fmax.reduce, dim="_rest")
            else:
                median = stacked.iotune.median("_rest")
        _draw_map(fig, ax, median, x=x, y=y, cbar_label=cbar_label, per=per)
        ax.set_title(label, fontsize="medium")
    title = _title(ds, f"{metric} throughput over {x}" + (f" and {y}" if y else ""), None)
    title += "\ncells: median of repeats"
    if rest:
        title += f", {'best' if reduce == 'max' else 'median'} over {', '.join(rest)}"
    _suptitle(fig, title)
    _footnote(fig, left_out)
    return fig


_Panel = tuple[str, xr.DataArray, str, tuple[str, float] | None]


def _panels(ds: xr.Dataset, metric: str) -> list[_Panel]:
    """(title, data as (params..., repeat), colour bar label, MiB a read) per panel.

    The last is :func:`~iotune.results.summary.mib_per_read`'s, for the patterns whose
    cells also say the time of a read, as the commands do.
    """
    panels: list[_Panel] = []
    if metric == "write":
        da, label = _metric(ds, "write", None)
        panels.append(("write", da, f"median {label}", None))
    elif metric == "read":
        if "pattern" not in ds.dims:
            raise ResultsError("read heatmaps need a 'pattern' dimension in the results")
        for p in ds["pattern"].values:
            da, label = _metric(ds, "read", str(p))
            per = mib_per_read(ds, f"read:{p}")
            unit = da.attrs.get("units", "MiB/s")
            title = f"read: {p} pattern" + (f"\n(cells: {unit}, time per {per[0]})" if per else "")
            panels.append((title, da, f"median {label}", per))
    else:
        raise ResultsError(f"metric must be one of ['read', 'write'], got {metric!r}")
    if all(d == "repeat" for d in panels[0][1].dims):
        raise ResultsError("a heatmap needs at least one swept parameter; nothing was swept")
    return panels


def _pick_axes(
    params: list[str], da: xr.DataArray, x: str | None, y: str | None
) -> tuple[str, str | None]:
    for role, name in (("x", x), ("y", y)):
        if name is not None and name not in params:
            raise ResultsError(f"{role}={name!r} is not a swept parameter; swept: {params}")
    if x is not None and x == y:
        raise ResultsError(f"x and y must differ, both are {x!r}")
    by_size = sorted(params, key=lambda d: -da.sizes[d])
    if x is None:
        rest = [p for p in by_size if p != y]
        x = "chunks" if "chunks" in rest else rest[0] if rest else None
        if x is None:  # only y was swept: put it on x
            return str(y), None
    if y is None:
        rest = [p for p in by_size if p != x]
        y = "codec" if "codec" in rest else rest[0] if rest else None
    return x, y


def _draw_map(
    fig: Figure,
    ax: Axes,
    median: xr.DataArray,
    *,
    x: str,
    y: str | None,
    cbar_label: str,
    per: tuple[str, float] | None,
) -> None:
    from matplotlib.colors import LogNorm, Normalize

    values = median.transpose(*[d for d in (y, x) if d]).values
    if y is None:
        values = values[None, :]
    good = values[np.isfinite(values) & (values > 0)]
    if good.size == 0:
        _no_data(ax)
        norm = Normalize(0, 1)
    elif good.max() > 100 * good.min():
        norm = LogNorm(good.min(), good.max())
    else:
        norm = Normalize(0, float(good.max()))
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", norm=norm, aspect="auto")
    ax.set_facecolor("0.92")  # empty cells: failed or not applicable
    colorbar = fig.colorbar(image, ax=ax, shrink=0.9)
    colorbar.set_label(cbar_label)
    _rate_ticks(colorbar.ax.yaxis)
    xlabels = _value_labels(median[x])
    rotate = len(xlabels) * max(map(len, xlabels)) > 40
    tilt: dict[str, Any] = {"rotation": 30, "ha": "right"} if rotate else {}
    ax.set_xticks(range(len(xlabels)), xlabels, **tilt)
    ax.set_xlabel(x)
    if y is None:
        ax.set_yticks([0], ["all"])
    else:
        ax.set_yticks(range(median.sizes[y]), _value_labels(median[y]))
        ax.set_ylabel(y)
    if values.size <= _MAX_ANNOTATED_CELLS and good.size:
        _annotate(ax, values, norm, per)


def _annotate(ax: Axes, values: np.ndarray, norm, per: tuple[str, float] | None) -> None:
    """Write each cell's figure (MiB/s, calls/s) as the commands do, and the time of a
    read or call below it."""
    for (row, col), v in np.ndenumerate(values):
        if np.isfinite(v):
            dark = norm(v) < 0.6 if v > 0 else True  # viridis is dark at the low end
            colour = "white" if dark else "black"
            text = format_number(v)
            if per is not None and v > 0:
                text += f"\n{format_duration(per[1] / v)}"
            ax.text(col, row, text, ha="center", va="center", fontsize=7, color=colour)
