"""Each trial's throughput as a fraction of the calibrated device (or object store) limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from iotune.core.errors import ResultsError
from iotune.core.units import format_number, format_rate
from iotune.plot._common import (
    _align,
    _footnote,
    _legend_handles,
    _no_data,
    _params,
    _side_legend,
    _styles,
    _suptitle,
    _title,
    _value_labels,
    _without_nowhere,
)
from iotune.plot.pareto import _grid_points
from iotune.results.limit import STORE

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

VARIABLE = "fraction_of_limit"
NO_LIMIT_NOTE = (
    "fraction-of-limit figure skipped: the results carry no device limit "
    "(run `iotune calibrate --scratch DIR` on the scratch file system, or "
    "`iotune calibrate --storage URL` for an object store, before the sweep)"
)
_WIDTH = 0.7  # of a category's slot, over which its points are spread


def has_limit(ds: xr.Dataset) -> bool:
    """Whether ``ds`` carries ``fraction_of_limit`` (see :mod:`iotune.runner.calibrate`)."""
    return VARIABLE in ds and "metric" in ds[VARIABLE].dims


def fraction_of_limit(ds: xr.Dataset) -> Figure:
    """Plot every successful grid point's throughput as a fraction of the device limit.

    One column of points per metric (``write``, ``read:<pattern>``), one point per
    grid point at its median over repeats with a thin line from the minimum to the
    maximum, coloured by ``codec`` (else the first swept parameter).  A dashed line
    marks 1, the bandwidth ``iotune calibrate`` measured (for an object store,
    ``iotune calibrate --storage``: the store's limit, its best PUT and GET
    throughput); the best point of each column is labelled.  Throughput counts
    the raw (uncompressed) bytes, so a compressed format can pass 1.

    Parameters
    ----------
    ds
        Results Dataset with ``fraction_of_limit`` over ``metric`` (and the
        ``device_limit_*_MiBps`` attributes), as made by
        :func:`iotune.results.limit.attach_limit`.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ResultsError
        The Dataset has no ``fraction_of_limit``.
    """
    ds = ds.iotune.dense()  # a search's sparse points as the grid of their values
    ds, left_out = _without_nowhere(ds)
    from matplotlib.figure import Figure

    if not has_limit(ds):
        raise ResultsError(NO_LIMIT_NOTE)
    params = _params(ds)
    da = _align(ds[VARIABLE].transpose(..., "metric", "repeat"), [*params, "metric"])
    metrics = [str(m) for m in da["metric"].values]
    fig = Figure(figsize=(max(6.0, 1.9 * len(metrics) + 3.0), 5.5), layout="constrained")
    ax = fig.subplots()
    color_dim = "codec" if "codec" in params else (params[0] if params else None)
    n_colors = da.sizes[color_dim] if color_dim else 1
    colors = [c for c, _ in _styles(n_colors)]
    index, names = _grid_points(da.isel(metric=0), params)
    drawn = False
    for col, metric in enumerate(metrics):
        spread = da.sel(metric=metric).iotune.spread()
        med, lo, hi = (a.transpose(*params).values.ravel() for a in spread)
        cidx = index[:, params.index(color_dim)] if color_dim else np.zeros(len(med), int)
        drawn |= _draw_column(ax, col, med, lo, hi, [colors[c] for c in cidx], names)
    if not drawn:
        _no_data(ax)
    store = ds.attrs.get("device_limit_kind") == STORE
    name = "store's limit" if store else "device limit"
    source = "iotune calibrate --storage" if store else "iotune calibrate"
    ax.axhline(1.0, color="black", ls="--", lw=1, label=f"{name} ({source})")
    ax.set_xticks(range(len(metrics)), metrics)
    ax.set_xlim(-0.6, len(metrics) - 0.4)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("operation")
    ax.set_ylabel(f"throughput / {name} (1 = calibrated bandwidth)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")
    if color_dim:
        handles = _legend_handles(_value_labels(da[color_dim]), [(c, "o") for c in colors])
        _side_legend(ax, handles, title=color_dim)
    _suptitle(fig, _title(ds, f"throughput as a fraction of the {name}", None) + _limits(ds, store))
    _footnote(fig, left_out)
    return fig


def _limits(ds: xr.Dataset, store: bool) -> str:
    write = ds.attrs.get("device_limit_write_MiBps")
    read = ds.attrs.get("device_limit_read_MiBps")
    if write is None or read is None:
        return ""
    if store:  # the best level of requests in flight, not one sequential stream
        shown = f"PUT {format_rate(float(write))}, GET {format_rate(float(read))}"
    else:
        shown = f"write {format_rate(float(write))}, cold read {format_rate(float(read))}"
    return f"\nlimits: {shown}; markers: median of repeats, lines: min to max"


def _draw_column(
    ax: Axes,
    col: int,
    med: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    colors: list,
    names: list[str],
) -> bool:
    """Spread one metric's points across its slot in rank order; label the best."""
    ok = np.flatnonzero(np.isfinite(med))
    if ok.size == 0:
        return False
    order = ok[np.argsort(med[ok])]
    offsets = np.linspace(-_WIDTH / 2, _WIDTH / 2, len(order)) if len(order) > 1 else [0.0]
    xs = col + np.asarray(offsets)
    ax.vlines(xs, lo[order], hi[order], colors=[colors[i] for i in order], lw=1, alpha=0.6)
    ax.scatter(xs, med[order], c=[colors[i] for i in order], s=22, zorder=3)
    best = order[-1]
    ax.annotate(
        f"{names[best]}\n{format_number(med[best])}",
        (col + offsets[-1], med[best]),
        (0, 6),
        textcoords="offset points",
        ha="right",
        va="bottom",
        fontsize=7,
    )
    return True
