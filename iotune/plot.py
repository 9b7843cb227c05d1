"""Figures of a sweep's results: throughput per setting and stored size vs throughput.

Pure functions from a results Dataset (schema version 1) to matplotlib Figures; the caller
saves them.  matplotlib is imported inside the functions so that importing this module stays
cheap, and Figures are built with the object-oriented API rather than pyplot, so they need no
display, are never registered with pyplot (nothing leaks) and can be made in worker threads.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from iotune.errors import ResultsError
from iotune.units import format_size

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_PANELS = 12
"""Most facet panels in one throughput figure; further facet dims are reduced by the median."""

_NOT_PARAMS = ("pattern", "repeat")
_BYTE_DIMS = frozenset({"chunk_cache", "transfer_size", "stripe_size"})
_METRIC_VARS = {"write": "write_MiBps", "read": "read_MiBps"}
_MARKERS = "osD^vPX*<>hp"
_NO_DATA = "no successful trials"
_MAX_ANNOTATIONS = 12
_ANNOTATION = {"textcoords": "offset points", "va": "bottom", "fontsize": 7}
_Style = tuple[object, str]  # (matplotlib colour, marker)


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
    da, ylabel = _metric(ds, metric, pattern)
    x, hue = _pick_x_hue(da, x, hue)
    da, facets, reduced = _limit_facets(da, [d for d in da.dims if d not in (x, hue, "repeat")])
    title = _title(ds, f"{metric} throughput", pattern)
    if reduced:
        title += f" (median over {', '.join(reduced)})"
    title += f"\nmarkers: median of {da.sizes['repeat']} repeats, bars: min to max"
    if x is None:
        return _single_bar(da, ylabel=ylabel, title=title)
    panels = list(_facet_panels(da, facets))
    fig, axes, ncols = _panel_grid(len(panels), n_x=da.sizes[x], legend=hue is not None)
    hue_labels = _value_labels(da[hue]) if hue else [""]
    styles = _styles(len(hue_labels))
    spans = []
    for i, (ax, (panel_title, sub)) in enumerate(zip(axes, panels, strict=True)):
        spans.append(_draw_panel(ax, sub, x=x, hue=hue, styles=styles))
        ax.set_title(panel_title, fontsize="medium")
        if i % ncols == 0:
            ax.set_ylabel(ylabel)
        if i + ncols >= len(panels):  # nothing below this panel
            ax.set_xlabel(x)
    _scale_y(axes, np.concatenate(spans), logy=logy)
    if hue:
        handles = _legend_handles(hue_labels, styles)
        fig.legend(handles=handles, title=hue, loc="outside right upper")
    fig.suptitle(title)
    return fig


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
    from matplotlib.figure import Figure

    da, ylabel = _metric(ds, metric, pattern)
    if "file_bytes" not in ds:
        raise ResultsError("the results have no 'file_bytes' variable to plot sizes from")
    params = [str(d) for d in da.dims if d != "repeat"]
    median = _spread(da)[0].transpose(*params)
    size = _per_point(ds["file_bytes"], median).astype(float).ravel() / 2**20
    xy = np.vstack([size, median.values.ravel()])
    ok = np.isfinite(xy).all(axis=0)
    if "status" in ds:
        ok &= _per_point(ds["status"], median).astype(str).ravel() == "ok"
    index, names = _grid_points(da, params)
    fig = Figure(figsize=(8.5, 5.5), layout="constrained")
    ax = fig.subplots()
    _scatter_groups(fig, ax, da, index=index, xy=xy, ok=ok)
    if ok.any():
        _draw_frontier(ax, xy[:, ok], [n for n, k in zip(names, ok, strict=True) if k])
    else:
        _no_data(ax)
    ax.set_xlabel("stored size (MiB)")
    ax.set_ylabel(f"median {ylabel}")
    ax.grid(alpha=0.3)
    fig.suptitle(_title(ds, f"stored size vs {metric} throughput", pattern))
    return fig


def all_figures(ds: xr.Dataset) -> dict[str, Figure]:
    """Return every standard figure of a results Dataset, keyed by a file-name stem.

    Keys are ``"write"``, ``"read-<pattern>"`` per read pattern, ``"size-vs-write"`` and
    ``"size-vs-read-<pattern>"``.  Read figures need ``read_MiBps`` and a ``pattern`` dim,
    size figures need ``file_bytes``.

    Parameters
    ----------
    ds
        Results Dataset (schema version 1).

    Returns
    -------
    dict of str to matplotlib.figure.Figure
    """
    metrics: list[tuple[str, str | None]] = []
    if "write_MiBps" in ds:
        metrics.append(("write", None))
    if "read_MiBps" in ds and "pattern" in ds.dims:
        metrics += [("read", str(p)) for p in ds["pattern"].values]
    figures = {f"{m}-{p}" if p else m: throughput(ds, metric=m, pattern=p) for m, p in metrics}
    if "file_bytes" in ds:
        for m, p in metrics:
            key = f"size-vs-{m}-{p}" if p else f"size-vs-{m}"
            figures[key] = size_vs_throughput(ds, metric=m, pattern=p)
    return figures


def _params(ds: xr.Dataset) -> list[str]:
    swept = ds.attrs.get("swept")
    if swept is None:
        return [str(d) for d in ds.dims if d not in _NOT_PARAMS]
    names = swept.split() if isinstance(swept, str) else [str(s) for s in np.atleast_1d(swept)]
    return [d for d in names if d in ds.dims]


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
        da = da.sel(pattern=pattern)
    elif pattern is not None:
        raise ResultsError(f"{var!r} has no pattern dimension, so pattern= must be None")
    ylabel = f"{metric} throughput ({da.attrs.get('units', 'MiB/s')})"
    da = _align(da, _params(ds))
    if "repeat" not in da.dims:
        da = da.expand_dims("repeat", axis=-1)
    return da, ylabel


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
        da = da.stack(_reduced=reduced).reduce(_nanmedian, dim="_reduced")
    return da, kept, reduced


def _facet_panels(da: xr.DataArray, facets: list[str]) -> Iterator[tuple[str, xr.DataArray]]:
    labels = {d: _value_labels(da[d]) for d in facets}
    for idx in itertools.product(*(range(da.sizes[d]) for d in facets)):
        title = ", ".join(f"{d}={labels[d][i]}" for d, i in zip(facets, idx, strict=True))
        yield title, da.isel(dict(zip(facets, idx, strict=True)))


def _spread(da: xr.DataArray) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
    """Median, minimum and maximum over repeats, ignoring NaN; all-NaN points stay NaN."""
    return tuple(da.reduce(f, dim="repeat") for f in (_nanmedian, np.fmin.reduce, np.fmax.reduce))


def _nanmedian(a: np.ndarray, axis: int) -> np.ndarray:
    """``np.nanmedian`` without its all-NaN warning.

    Failed points make all-NaN slices routine, and ``warnings.catch_warnings`` is not
    thread-safe, so the warning is avoided rather than silenced.
    """
    a = np.sort(np.moveaxis(a, axis, -1), axis=-1)  # NaN sorts last
    n = (~np.isnan(a)).sum(axis=-1, keepdims=True)
    lo, hi = (np.take_along_axis(a, np.maximum(k, 0), axis=-1) for k in ((n - 1) // 2, n // 2))
    return np.where(n > 0, (lo + hi) / 2, np.nan)[..., 0]


def _value_labels(coord: xr.DataArray) -> list[str]:
    """Labels for coordinate values; byte counts as ``64MiB``."""
    is_bytes = coord.attrs.get("units") in ("bytes", "B") or coord.name in _BYTE_DIMS
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
    colors = cmap.colors[:n] if n <= 20 else cmap(np.linspace(0, 1, n)).tolist()
    return [(c, _MARKERS[i % len(_MARKERS)]) for i, c in enumerate(colors)]


def _legend_handles(labels: list[str], styles: list[_Style], *, line: bool = True) -> list:
    from matplotlib.lines import Line2D

    return [
        Line2D([], [], color=c, marker=m, linestyle="-" if line else "none", label=label)
        for label, (c, m) in zip(labels, styles, strict=False)
    ]


def _draw_panel(
    ax: Axes, sub: xr.DataArray, *, x: str, hue: str | None, styles: list[_Style]
) -> np.ndarray:
    """Per hue value, medians joined by a line with min-max error bars.

    Returns the extremes drawn, for choosing the y scale.
    """
    med, lo, hi = (a.transpose(*[d for d in (hue, x) if d]).values for a in _spread(sub))
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
            style = {"color": color, "marker": marker, "markersize": 5, "capsize": 3}
            ax.errorbar(shifted, med[i], yerr=yerr, label=label, **style)
    if not np.isfinite(med).any():
        _no_data(ax)
    labels = _value_labels(sub[x])
    rotate = n_x * max(map(len, labels)) > 36  # long labels would run into each other
    ax.set_xticks(positions, labels, **({"rotation": 30, "ha": "right"} if rotate else {}))
    ax.set_xlim(-0.5, n_x - 0.5)
    ax.grid(axis="y", alpha=0.3)
    return np.concatenate([lo.ravel(), hi.ravel()])


def _no_data(ax: Axes) -> None:
    ax.text(0.5, 0.5, _NO_DATA, transform=ax.transAxes, ha="center", va="center", color="gray")


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
    med, lo, hi = (float(a) for a in _spread(da))
    if math.isfinite(med):
        ax.bar([0], [med], yerr=[[med - lo], [hi - med]], width=0.5, capsize=8, color="C0")
        ax.set_ylim(bottom=0)
    else:
        _no_data(ax)
    ax.set_xticks([0], ["single configuration"])
    ax.set_xlim(-1, 1)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title)
    return fig


def _title(ds: xr.Dataset, what: str, pattern: str | None) -> str:
    title = f"{ds.attrs.get('name', 'sweep')}: {what}"
    return f"{title}, {pattern} pattern" if pattern else title


def _grid_points(da: xr.DataArray, params: list[str]) -> tuple[np.ndarray, list[str]]:
    """Per grid point in ``ravel()`` order: its index along each param, and its label."""
    shape = [da.sizes[d] for d in params]
    index = np.array(list(np.ndindex(*shape)), dtype=int).reshape(math.prod(shape), len(params))
    labels = [_value_labels(da[d]) for d in params]
    names = [" / ".join(lab[i] for lab, i in zip(labels, row, strict=True)) for row in index]
    return index, names


def _scatter_groups(
    fig: Figure, ax: Axes, da: xr.DataArray, *, index: np.ndarray, xy: np.ndarray, ok: np.ndarray
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
    for dim, loc, styles in legends:
        if dim:
            handles = _legend_handles(_value_labels(da[dim]), styles, line=False)
            fig.legend(handles=handles, title=dim, loc=f"outside right {loc}")


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
