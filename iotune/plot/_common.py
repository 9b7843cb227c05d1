"""Helpers shared by the figure modules: selecting metrics, labels, panels and styles.

The results are read through ``ds.iotune`` (swept parameters) and ``da.iotune``
(medians and spreads over repeats), see :mod:`iotune.results.accessor`.  matplotlib is
imported inside the functions that need it, so importing :mod:`iotune.plot` stays cheap.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from iotune.core.errors import ResultsError
from iotune.core.units import format_duration, format_number, format_size
from iotune.model import parameters
from iotune.results import accessor  # noqa: F401 - registers ds.iotune, da.iotune
from iotune.results.summary import nowhere_found

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_METRIC_VARS = {"write": "write_MiBps", "read": "read_MiBps"}
_MARKERS = "osD^vPX*<>hp"
_NO_DATA = "no successful trials"
_Style = tuple[Any, str]  # (matplotlib colour, marker)


def _params(ds: xr.Dataset) -> list[str]:
    return list(ds.iotune.swept)


def _align(da: xr.DataArray, params: list[str]) -> xr.DataArray:
    """Drop length-1 dims that are not parameters and order the rest as ``params``."""
    keep = [*params, "repeat"]
    for d in [d for d in da.dims if d not in keep]:
        if da.sizes[d] != 1:
            raise ResultsError(f"{da.name!r} varies along {d!r}, which is not a swept parameter")
        da = da.isel({d: 0}, drop=True)
    return da.transpose(*[d for d in keep if d in da.dims])


def _per_point(var: xr.DataArray, like: xr.DataArray) -> np.ndarray:
    """``var`` as an array laid out like ``like`` (dims it lacks are broadcast)."""
    var = _align(var, [str(d) for d in like.dims])
    return var.broadcast_like(like).transpose(*like.dims).values


def _metric(ds: xr.Dataset, metric: str, pattern: str | None) -> tuple[xr.DataArray, str]:
    """Select a throughput variable as (params..., repeat) and its y label."""
    if metric not in _METRIC_VARS:
        raise ResultsError(f"metric must be one of {sorted(_METRIC_VARS)}, got {metric!r}")
    var = _METRIC_VARS[metric]
    if var not in ds:
        raise ResultsError(f"the results have no {var!r} variable")
    da = ds[var]
    if "pattern" in da.dims:
        choices = [str(p) for p in ds["pattern"].values]
        if pattern not in choices:
            raise ResultsError(f"{metric} throughput needs pattern= one of {choices}")
        # the user's own code: calls a second (iotune.results.percall), not MiB/s
        da = ds.iotune.metric(f"read:{pattern}")
    elif pattern is not None:
        raise ResultsError(f"{var!r} has no pattern dimension, so pattern= must be None")
    ylabel = f"{metric} throughput ({da.attrs.get('units', 'MiB/s')})"
    if da.attrs.get("units") == "calls/s":
        ylabel = f"{metric}:{pattern} calls per second (1 / seconds a call)"
    da = _align(da, _params(ds))
    if "repeat" not in da.dims:
        da = da.expand_dims("repeat", axis=-1)
    return da, ylabel


def _value_labels(coord: xr.DataArray) -> list[str]:
    """Labels for coordinate values; byte counts as ``64MiB``."""
    is_bytes = coord.attrs.get("units") in ("bytes", "B") or parameters.is_bytes(str(coord.name))
    labels = []
    for v in coord.values.tolist():
        if is_bytes and isinstance(v, int | float) and not isinstance(v, bool):
            labels.append(format_size(v))
        elif isinstance(v, float):
            labels.append(f"{v:g}")
        else:
            labels.append(v.decode() if isinstance(v, bytes) else str(v))
    return labels


def _panel_grid(n: int, *, n_x: int, legend: bool) -> tuple[Figure, list[Axes], int]:
    from matplotlib.figure import Figure

    ncols = min(n, 3)
    nrows = math.ceil(n / ncols)
    width = min(8.0, max(4.0, 1.2 + 0.6 * n_x))
    figsize = (width * ncols + (1.8 if legend else 0.3), 1.0 + 3.4 * nrows)
    fig = Figure(figsize=figsize, layout="constrained")
    flat = list(fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel())
    for ax in flat[n:]:
        ax.remove()
    return fig, flat[:n], ncols


def _styles(n: int) -> list[_Style]:
    """One (colour, marker) per line; markers differ too so lines survive grey printing."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20" if n <= 20 else "viridis"]
    colors = cmap(np.arange(n)) if n <= 20 else cmap(np.linspace(0, 1, n))  # tab: by index
    return [(tuple(c), _MARKERS[i % len(_MARKERS)]) for i, c in enumerate(colors.tolist())]


def _legend_handles(labels: list[str], styles: list[_Style], *, line: bool = True) -> list:
    from matplotlib.lines import Line2D

    return [
        Line2D([], [], color=c, marker=m, linestyle="-" if line else "none", label=label)
        for label, (c, m) in zip(labels, styles, strict=False)
    ]


def _side_legend(
    ax: Axes, handles: list, *, title: str, where: str = "upper", past_time_axis: bool = False
) -> None:
    """A legend on the right of ``ax``, at its top (``where="upper"``) or bottom.

    Tied to the axes rather than to the figure's edge, so constrained layout sets it
    below the figure's title instead of beside it, where a long title would run into it.
    Kept as an artist of its own, so the axes can hold another legend inside.
    ``past_time_axis``: start it beyond the time axis :func:`_time_axis` drew there.
    """
    from matplotlib.legend import Legend
    from matplotlib.transforms import ScaledTranslation

    gap = 8.0 + (_TIME_AXIS_WIDTH if past_time_axis else 0.0)  # points right of the axes
    shift = ScaledTranslation(gap / 72, 0, ax.figure.dpi_scale_trans)
    upper = where == "upper"
    anchor = (1.0, 1.0) if upper else (1.0, 0.0)
    legend = Legend(
        ax,
        handles,
        [h.get_label() for h in handles],
        title=title,
        loc="upper left" if upper else "lower left",
        bbox_to_anchor=anchor,
        bbox_transform=ax.transAxes + shift,
        borderaxespad=0,
    )
    ax.add_artist(legend)
    legend.set_clip_on(False)  # add_artist clips to the axes: the legend lies beside them


def _no_data(ax: Axes) -> None:
    ax.text(0.5, 0.5, _NO_DATA, transform=ax.transAxes, ha="center", va="center", color="gray")


def _title(ds: xr.Dataset, what: str, pattern: str | None) -> str:
    title = f"{ds.attrs.get('name', 'sweep')}: {what}"
    return f"{title}, {pattern} pattern" if pattern else title


def _without_nowhere(ds: xr.Dataset) -> tuple[xr.Dataset, list[str]]:
    """``ds`` without the swept values no grid point applied, and a line naming each.

    Such a value would only draw an empty panel, row or legend entry; the figure names
    it once instead (:func:`_footnote`), in the words ``run`` and ``show`` use.
    """
    lines = []
    for found in nowhere_found(ds):
        if ds.sizes[found.dim] > 1:  # a dimension keeps one value at least
            ds = ds.drop_sel({found.dim: [found.value]})
            lines.append(found.line)
    return ds, lines


def _footnote(fig: Figure, lines: list[str]) -> None:
    """Name the left-out values at the figure's foot, wrapped to its width.

    It takes the figure's x-label slot, which constrained layout keeps room for
    (no figure here has a figure-wide x label of its own).
    """
    if lines:
        text = "\n".join(lines)
        fig.supxlabel(text, x=0.01, ha="left", fontsize="small", color="0.3", wrap=True)


def _suptitle(fig: Figure, text: str) -> None:
    """The figure's title, wrapped at the figure's edges rather than cut off there."""
    fig.suptitle(text, wrap=True)


def _rate_ticks(axis: Any) -> None:
    """Throughput ticks as the commands write rates: 3 significant digits (``0.150``, ``20.0``).

    Call it after the axis's scale is set (setting a scale resets the tick formatters).
    """
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: format_number(v) if v else "0"))
    if axis.get_scale() == "log":  # a log axis here spans 100x at least: decades suffice
        axis.set_minor_formatter(NullFormatter())


def _size_ticks(axis: Any) -> None:
    """Byte ticks as the commands write sizes: binary units, 3 significant digits."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    shown = FuncFormatter(lambda v, _: format_size(v, exact=False) if v >= 0 else "")
    axis.set_major_formatter(shown)
    if axis.get_scale() == "log":
        axis.set_minor_formatter(NullFormatter())


#: how far right of the axes a legend starts when a time axis is there: the longest
#: duration label (``12.3 ms``), its tick and the axis label, in points
_TIME_AXIS_WIDTH = 72.0


def _time_axis(ax: Axes, per: tuple[str, float] | None) -> bool:
    """Label the right of a throughput axis with the time one read takes at each tick.

    ``per`` is :func:`iotune.results.summary.mib_per_read`'s ``(noun, MiB)``: at
    ``y`` MiB/s a read takes ``MiB / y`` seconds (at ``y`` calls/s, ``("call", 1)``:
    ``1 / y`` seconds a call), written as the commands write it
    (``179 µs a read``).  The ticks are the throughput's own, so each time sits
    beside the rate it is.  Returns whether an axis was added.
    """
    from matplotlib.ticker import FuncFormatter, NullFormatter

    if per is None:
        return False
    noun, mib = per
    side = ax.secondary_yaxis("right")  # the same coordinates as the throughput
    side.yaxis.set_major_formatter(
        FuncFormatter(lambda v, _: format_duration(mib / v) if v > 0 else "")
    )
    side.yaxis.set_minor_formatter(NullFormatter())
    side.set_ylabel(f"time per {noun}")
    return True
