"""The accelerator utilisation a loader allows, against its ``num_workers``, at the sweep's step.

With ``read.batches.step`` a training loop computes that long on each batch; the
utilisation (:mod:`iotune.measuring.steady`) is the share of the loop spent
computing rather than waiting for the next batch.  MLPerf Storage counts a run
only at 90 % or more (:data:`iotune.analysis.busy.TARGET`), drawn as a line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from iotune.analysis.busy import TARGET
from iotune.core.errors import ResultsError
from iotune.plot._common import (
    _align,
    _legend_handles,
    _params,
    _side_legend,
    _styles,
    _suptitle,
    _value_labels,
)
from iotune.results.batches import PATTERN, batches_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

WORKERS = "num_workers"


def has_utilisation(ds: xr.Dataset) -> bool:
    """Whether :func:`utilisation` can draw ``ds``: a batches step and ``num_workers`` swept."""
    step = (batches_of(ds) or {}).get("step")
    return "read_utilisation" in ds and bool(step) and WORKERS in _params(ds.iotune.dense())


def utilisation(ds: xr.Dataset) -> Figure:
    """Plot the accelerator utilisation (%) against ``num_workers``, one line per layout.

    A layout is each combination of the other swept parameters (format, chunks,
    codec ...).  Markers are the median over repeats, bars span the minimum to the
    maximum; the dashed line is MLPerf Storage's 90 %.

    Parameters
    ----------
    ds
        Results Dataset of a sweep with the ``batches`` pattern, a
        ``read.batches.step`` and ``num_workers`` among its parameters.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ResultsError
        The results have no batches pattern, no step or no ``num_workers``.
    """
    from matplotlib.figure import Figure

    step = float((batches_of(ds) or {}).get("step") or 0)
    if "read_utilisation" not in ds or not step:
        raise ResultsError(
            "these results have no accelerator utilisation: sweep the batches pattern "
            "with a read.batches.step (e.g. 50ms)"
        )
    ds = ds.iotune.dense()
    params = _params(ds)
    if WORKERS not in params:
        raise ResultsError(f"num_workers is not a swept parameter; swept: {params}")
    busy = _align(ds["read_utilisation"].sel(pattern=PATTERN, drop=True), params) * 100
    # a parameter of one value names no layout apart: left out of the labels
    layouts = [p for p in params if p != WORKERS and busy.sizes[p] > 1]
    busy = busy.isel({p: 0 for p in params if p != WORKERS and p not in layouts})
    stacked = busy.stack(_layout=layouts) if layouts else busy.expand_dims(_layout=[""])
    med, lo, hi = (a.transpose("_layout", WORKERS).values for a in stacked.iotune.spread())
    labels = _layout_labels(stacked, layouts)
    fig = Figure(figsize=(7.5 if len(labels) > 1 else 6, 4.2), layout="constrained")
    ax = fig.subplots()
    workers = np.asarray(ds[WORKERS].values, dtype=float)
    styles = _styles(len(labels))
    for i, (color, marker) in enumerate(styles):
        if np.isfinite(med[i]).any():
            yerr = np.vstack([med[i] - lo[i], hi[i] - med[i]])
            ax.errorbar(workers, med[i], yerr=yerr, color=color, marker=marker, capsize=3)
    ax.axhline(TARGET * 100, color="0.3", linestyle="--", linewidth=1)
    # the threshold's name just below its line, at the left, where no legend lies
    where = ax.get_yaxis_transform()  # x in axes fraction, y in data
    ax.text(
        0.01,
        TARGET * 100 - 2,
        f"MLPerf Storage: {TARGET:.0%}",
        transform=where,
        va="top",
        fontsize="small",
        color="0.3",
    )
    ax.set_xticks(workers, _value_labels(ds[WORKERS]))
    ax.set_ylim(0, 105)
    ax.set_xlabel(WORKERS)
    ax.set_ylabel("accelerator utilisation (%)")
    ax.grid(axis="y", alpha=0.3)
    if len(labels) > 1:
        _side_legend(ax, _legend_handles(labels, styles), title=" ".join(layouts))
    _suptitle(fig, utilisation_title(ds, step, n_repeats=busy.sizes.get("repeat", 1)))
    return fig


def utilisation_title(ds: xr.Dataset, step: float, *, n_repeats: int) -> str:
    """The figure's title: the sweep, the step time and what the marks are."""
    return (
        f"{ds.attrs.get('name', 'sweep')}: accelerator utilisation against num_workers, "
        f"step {step * 1000:g} ms a batch\nmarkers: median of {n_repeats} repeats, "
        "bars: min to max"
    )


def _layout_labels(stacked: xr.DataArray, layouts: list[str]) -> list[str]:
    """``netcdf4 365x15x30 zlib``: one label per layout, the values of its parameters."""
    if not layouts:
        return [""]
    columns = [_value_labels(stacked[d]) for d in layouts]
    return [" ".join(values) for values in zip(*columns, strict=True)]
