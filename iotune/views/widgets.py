"""An ipywidgets explorer over a results Dataset.

``iotune.explore(ds)`` shows controls for the metric, the x parameter, the
hue and facet parameters and the statistic over repeats, a dropdown or slider
for every other dimension, a figure and a table of the best configurations,
with whether the best beats the runner-up beyond the noise of the repeats (as
``iotune recommend`` says it).
Changing any control redraws the figure and the table in place.  ipywidgets
and matplotlib are imported only when an explorer is made.
"""

from __future__ import annotations

import html
import io
import math
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.core.errors import UsageError
from iotune.core.extras import require
from iotune.core.units import format_number
from iotune.results.accessor import label, plain, value_label  # and ds.iotune
from iotune.results.stats import ALPHA, Separation, separate

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.figure import Figure

STATISTICS = ("median", "min", "max", "mean")
DPI = 90
#: units where a smaller number is the better configuration
LOWER_IS_BETTER = frozenset({"s", "bytes"})
_NONE = ""
_PREFERRED_X = ("chunks", "chunk_cache", "level", "codec")


def explore(results: xr.Dataset | str | Path, *, metric: str | None = None, top: int = 5):
    """Show an interactive explorer of a results Dataset (or file) in Jupyter.

    Parameters
    ----------
    results
        A results Dataset, a results file or the output directory holding one
        (a search's results are shown as the grid of the values it visited).
    metric
        Data variable shown first; default ``write_MiBps``.
    top
        Rows in the table of best configurations.

    Returns
    -------
    Explorer
        Displays itself; its controls are attributes (``metric``, ``x``,
        ``hue``, ``facet``, ``stat``, ``top``, ``fixed[dim]``) so a script can
        drive it, and ``figure`` is the matplotlib Figure last drawn.
    """
    if isinstance(results, str | Path):
        from iotune.results.dataset import open_results

        results = open_results(results)
    # a search's sparse points as the grid of the values it visited
    return Explorer(results.iotune.dense(), metric=metric, top=top)


def metrics(ds: xr.Dataset) -> list[str]:
    """The numeric data variables the explorer can show, throughputs first."""
    dims = {*explorable_dims(ds), "repeat"}
    found = [
        str(name)
        for name, var in ds.data_vars.items()
        if var.dtype.kind in "fiu" and set(map(str, var.dims)) <= dims and var.notnull().any()
    ]
    return sorted(found, key=lambda n: (not n.endswith("MiBps"), found.index(n)))


def explorable_dims(ds: xr.Dataset) -> list[str]:
    """The swept parameters (``ds.iotune.swept``) and ``pattern``."""
    dims = list(ds.iotune.swept)
    return [*dims, "pattern"] if "pattern" in ds.dims else dims


class Explorer:
    """Controls, a figure and a best-N table over one results Dataset (see :func:`explore`)."""

    def __init__(self, ds: xr.Dataset, *, metric: str | None = None, top: int = 5) -> None:
        require("ipywidgets", extra="jupyter", feature="the explorer")
        import ipywidgets as w

        self.ds = ds
        self.dims = explorable_dims(ds)
        names = metrics(ds)
        if not names:
            raise UsageError("explore: the results hold no numeric metric to show")
        first = metric or ("write_MiBps" if "write_MiBps" in names else names[0])
        if first not in names:
            raise UsageError(f"explore: metric {first!r} is not allowed; allowed: {names}")
        x = next((d for d in _PREFERRED_X if d in self.dims), self.dims[0] if self.dims else "")
        hue = next((d for d in ("codec", *self.dims) if d in self.dims and d != x), _NONE)
        roles = [("(none)", _NONE), *((d, d) for d in self.dims)]
        self.metric = w.Dropdown(options=[(_metric_label(ds, n), n) for n in names], value=first)
        self.metric.description = "metric"
        self.x = w.Dropdown(options=self.dims or [_NONE], value=x, description="x")
        self.hue = w.Dropdown(options=roles, value=hue, description="hue")
        self.facet = w.Dropdown(options=roles, value=_NONE, description="facets")
        self.stat = w.Dropdown(options=STATISTICS, value="median", description="repeats")
        self.top = w.IntSlider(value=top, min=1, max=25, description="best N")
        self.fixed = {d: _fixed_control(w, ds, d) for d in self.dims}
        self.image = w.Image(format="png")
        self.table = w.HTML()
        self.figure: Figure | None = None
        self._busy = False
        self.metric.add_class("iotune-metric")
        self.image.add_class("iotune-figure")
        self.table.add_class("iotune-best")
        self._fixed_box = w.HBox(layout=w.Layout(flex_flow="row wrap"))
        for control in (self.metric, self.x, self.hue, self.facet, self.stat, self.top):
            control.observe(self._changed, names="value")
        for control in self.fixed.values():
            control.observe(self._changed, names="value")
        rows = [
            w.HBox([self.metric, self.stat, self.top], layout=w.Layout(flex_flow="row wrap")),
            w.HBox([self.x, self.hue, self.facet], layout=w.Layout(flex_flow="row wrap")),
            self._fixed_box,
            self.image,
            self.table,
        ]
        self.widget = w.VBox(rows)
        self.widget.add_class("iotune-explorer")
        self.update()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _changed(self, change: dict) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            self._one_role_per_dim(change["owner"])
        finally:
            self._busy = False
        self.update()

    def _one_role_per_dim(self, owner: Any) -> None:
        """A dimension is x, hue or facets, not two of them: the control just set wins."""
        if owner is self.x:
            for other in (self.hue, self.facet):
                if other.value == self.x.value:
                    other.value = _NONE
        elif owner in (self.hue, self.facet) and owner.value:
            other = self.facet if owner is self.hue else self.hue
            if other.value == owner.value:
                other.value = _NONE
            if self.x.value == owner.value:
                free = [d for d in self.dims if d not in (self.hue.value, self.facet.value)]
                if free:
                    self.x.value = free[0]
                else:
                    owner.value = _NONE

    @property
    def roles(self) -> list[str]:
        """The dimensions currently on the x axis, as hue and as facets."""
        return [d for d in (self.x.value, self.hue.value, self.facet.value) if d]

    def reduced(self) -> xr.DataArray:
        """The metric after the statistic over repeats and the fixed selections."""
        da = _statistic(self.ds[self.metric.value], self.stat.value)
        where = {d: c.value for d, c in self.fixed.items() if d in da.dims and d not in self.roles}
        return da.sel(where)

    def update(self) -> None:
        """Redraw the figure and the table from the controls' current values."""
        self._fixed_box.children = [
            c for d, c in self.fixed.items() if d not in self.roles and d in self._metric_dims()
        ]
        self.figure = self._draw(self.reduced())
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=DPI)
        self.image.width = str(round(self.figure.get_figwidth() * DPI))  # shown 1:1, not stretched
        self.image.value = buffer.getvalue()
        self.table.value = self._best_table()

    def _metric_dims(self) -> list[str]:
        return [str(d) for d in self.ds[self.metric.value].dims]

    def _ylabel(self) -> str:
        var = self.ds[self.metric.value]
        units = var.attrs.get("units", "")
        long = var.attrs.get("long_name", self.metric.value)
        return f"{self.stat.value} {long}" + (f" ({units})" if units and units != "1" else "")

    def _draw(self, da: xr.DataArray) -> Figure:
        from matplotlib.figure import Figure

        facet = self.facet.value if self.facet.value in da.dims else None
        panels = list(da[facet].values) if facet else [None]
        ncols = min(len(panels), 3)
        nrows = math.ceil(len(panels) / ncols)
        fig = Figure(figsize=(3.6 * ncols + 2.2, 3.2 * nrows + 0.8), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
        for ax, value in zip(axes, panels, strict=False):
            sub = da.sel({facet: value}) if facet else da
            self._draw_panel(ax, sub)
            if facet:
                ax.set_title(f"{facet}={value_label(facet, value)}", fontsize="medium")
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        for i, ax in enumerate(axes[: len(panels)]):
            if i % ncols == 0:
                ax.set_ylabel(self._ylabel())
            ax.set_xlabel(self.x.value or "")
        if any(ax.get_legend_handles_labels()[0] for ax in axes):
            handles, labels = axes[0].get_legend_handles_labels()
            fig.legend(handles, labels, title=self.hue.value, loc="outside right upper")
        fig.suptitle(self._title(), fontsize="medium")
        return fig

    def _draw_panel(self, ax: Any, da: xr.DataArray) -> None:
        x = self.x.value if self.x.value in da.dims else None
        hue = self.hue.value if self.hue.value in da.dims else None
        xs = list(da[x].values) if x else [None]
        positions = np.arange(len(xs))
        for value in list(da[hue].values) if hue else [None]:
            line = da.sel({hue: value}) if hue else da
            ys = [float(line.sel({x: v}).values) if x else float(line.values) for v in xs]
            label = value_label(hue, value) if hue else None
            ax.plot(positions, ys, marker="o", label=label)
        ax.set_xticks(positions, [value_label(x, v) if x else "(all)" for v in xs])
        ax.tick_params(axis="x", labelrotation=30)
        values = da.values[np.isfinite(da.values)]
        if values.size and values.min() > 0 and values.max() / values.min() > 100:
            ax.set_yscale("log")
        if not values.size:
            ax.text(0.5, 0.5, "no successful trials", ha="center", transform=ax.transAxes)
        ax.grid(alpha=0.3)

    def _title(self) -> str:
        fixed = [
            f"{d}={value_label(d, c.value)}"
            for d, c in self.fixed.items()
            if d not in self.roles and d in self._metric_dims()
        ]
        return f"{self.metric.value} ({self.stat.value} of repeats)" + (
            f"\n{', '.join(fixed)}" if fixed else ""
        )

    def best(self) -> list[dict[str, Any]]:
        """The best N configurations of the metric, best first (pattern held as chosen)."""
        flat, dims, order = self._ranked()
        rows = []
        for i in order[: self.top.value]:
            point = flat.isel(point=int(i))
            row: dict[str, str | float] = {d: value_label(d, point[d].values) for d in dims}
            row[self.metric.value] = float(flat.values[i])
            rows.append(row)
        return rows

    def separation(self, alpha: float = ALPHA) -> Separation | None:
        """The best configuration against the runner-up: a rank test over their repeats.

        As ``iotune recommend`` says it (:class:`iotune.results.stats.Separation`), in the
        metric's direction (seconds and bytes: lower is better).  ``None`` when the
        metric has no repeats or fewer than two configurations have a value.
        """
        metric = self.metric.value
        flat, dims, order = self._ranked()
        if "repeat" not in self.ds[metric].dims or len(order) < 2:
            return None
        where = [{d: flat[d].values[i] for d in dims} for i in order[:2]]
        repeats = [self._at_pattern(self.ds[metric]).sel(w).values for w in where]
        units = self.ds[metric].attrs.get("units", "")
        return separate(
            *repeats,
            runner_up=label({d: plain(v) for d, v in where[1].items()}),
            quantity=metric,
            unit=units,
            larger=units not in LOWER_IS_BETTER,
            alpha=alpha,
            intervals_overlap=self._intervals_overlap(where),
            why=f"by the {self.stat.value} of its repeats, as this table ranks",
        )

    def _intervals_overlap(self, where: list[dict[str, Any]]) -> dict[str, bool]:
        """Whether the metric's confidence intervals at two points overlap, where there are any."""
        metric = self.metric.value
        names = (f"{metric}_ci_low", f"{metric}_ci_high")
        if not all(n in self.ds for n in names):
            return {}
        (lo1, hi1), (lo2, hi2) = (
            [float(self._at_pattern(self.ds[n]).sel(w)) for n in names] for w in where
        )
        if not (lo1 <= hi1 and lo2 <= hi2):  # NaN: no interval at one of them
            return {}
        return {metric: lo1 <= hi2 and lo2 <= hi1}

    def _ranked(self) -> tuple[xr.DataArray, list[str], list[int]]:
        """The statistic over one ``point`` dimension, its dims, and the points best first."""
        da = self._at_pattern(_statistic(self.ds[self.metric.value], self.stat.value))
        lower = self.ds[self.metric.value].attrs.get("units") in LOWER_IS_BETTER
        dims = [str(d) for d in da.dims]
        flat = da.stack(point=dims) if dims else da.expand_dims(point=[0])
        values = flat.values
        order = [int(i) for i in np.argsort(values if lower else -values) if np.isfinite(values[i])]
        return flat, dims, order

    def _at_pattern(self, da: xr.DataArray) -> xr.DataArray:
        """``da`` at the pattern chosen, if it has patterns."""
        return da.sel(pattern=self.fixed["pattern"].value) if "pattern" in da.dims else da

    def _best_table(self) -> str:
        rows = self.best()
        metric = self.metric.value
        lower = self.ds[metric].attrs.get("units") in LOWER_IS_BETTER
        which = "lowest" if lower else "highest"
        head = f"best {self.top.value} by {self.stat.value} {metric} ({which})"
        if "pattern" in self._metric_dims():
            head += f", pattern={self.fixed['pattern'].value}"
        if not rows:
            return f"<b>{html.escape(head)}</b><p>no successful trials</p>"
        sep = self.separation()
        verdict = "" if sep is None else f"<p class='iotune-separation'>{html.escape(sep.text)}</p>"
        cols = list(rows[0])
        cells = "".join(f"<th>{html.escape(c)}</th>" for c in ["#", *cols])
        body = "".join(
            "<tr>"
            + f"<td>{n}</td>"
            + "".join(f"<td>{html.escape(_cell(row[c]))}</td>" for c in cols)
            + "</tr>"
            for n, row in enumerate(rows, 1)
        )
        style = "<style>.iotune-best td, .iotune-best th {padding: 0 0.8em 0 0}</style>"
        table = f"<table><tr>{cells}</tr>{body}</table>"
        return f"{style}<b>{html.escape(head)}</b>{table}{verdict}"


def _fixed_control(w: Any, ds: xr.Dataset, dim: str) -> Any:
    options = [(value_label(dim, v), v.item() if hasattr(v, "item") else v) for v in ds[dim].values]
    numeric = ds[dim].dtype.kind in "iuf" and len(options) > 1
    cls = w.SelectionSlider if numeric else w.Dropdown
    return cls(
        options=options,
        value=options[0][1],
        description=dim,
        style={"description_width": "initial"},
    )


def _metric_label(ds: xr.Dataset, name: str) -> str:
    units = ds[name].attrs.get("units", "")
    return f"{name} ({units})" if units and units != "1" else name


def _statistic(da: xr.DataArray, stat: str) -> xr.DataArray:
    if stat not in STATISTICS:
        raise UsageError(f"explore: statistic {stat!r} is not allowed; allowed: {STATISTICS}")
    if "repeat" not in da.dims:
        return da
    if stat == "median":
        return da.iotune.median()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN points stay NaN
        return getattr(da, stat)("repeat", skipna=True, keep_attrs=True)


def _cell(value: Any) -> str:
    return format_number(value) if isinstance(value, float) else str(value)
