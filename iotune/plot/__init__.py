"""Figures of a sweep's results: throughput per setting, heatmaps, size vs throughput, limit.

Pure functions from a results Dataset (schema version 1) to matplotlib Figures; the caller
saves them.  matplotlib is imported inside the functions so that importing this package stays
cheap, and Figures are built with the object-oriented API rather than pyplot, so they need no
display, are never registered with pyplot (nothing leaks) and can be made in worker threads.

- :func:`throughput`: median and min-max over repeats against one parameter, facets;
- :func:`heatmap`: a metric over two parameters, one panel per read pattern;
- :func:`size_vs_throughput`: stored size against throughput, Pareto frontier marked;
- :func:`fraction_of_limit`: each trial's throughput over the calibrated device limit;
- :func:`noise_over_time`: the reference configuration through the run, its noise floor.
- :func:`vs_baselines`: each pattern's best over the named baselines (the spec's ``baselines``).
- :func:`convergence`, :func:`importance`: a search's best so far, and which knobs matter.
- :func:`utilisation`: the accelerator utilisation against ``num_workers`` at the batches' step.

A search's sparse results are drawn as the grid of the values it visited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import xarray as xr

from iotune.plot._common import _params
from iotune.plot.baselines import vs_baselines
from iotune.plot.busy import has_utilisation, utilisation
from iotune.plot.convergence import convergence, importance
from iotune.plot.heatmap import heatmap
from iotune.plot.limit import NO_LIMIT_NOTE, fraction_of_limit, has_limit
from iotune.plot.lines import MAX_PANELS, throughput
from iotune.plot.noise import noise_over_time
from iotune.plot.pareto import size_vs_throughput
from iotune.results import speedup
from iotune.results.baselines import has_baselines

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "MAX_PANELS",
    "all_figures",
    "convergence",
    "fraction_of_limit",
    "heatmap",
    "importance",
    "noise_over_time",
    "notes",
    "size_vs_throughput",
    "throughput",
    "utilisation",
    "vs_baselines",
]


def all_figures(ds: xr.Dataset) -> dict[str, Figure]:
    """Return every standard figure of a results Dataset, keyed by a file-name stem.

    Keys are ``"write"`` and ``"read-<pattern>"`` per read pattern (lines with the
    spread of repeats), ``"heatmap-write"`` and ``"heatmap-read"`` (when a parameter
    was swept), ``"size-vs-write"`` and ``"size-vs-read-<pattern>"`` (with
    ``file_bytes``) and ``"fraction-of-limit"`` (when the results carry a device
    limit), ``"noise"`` (when the run measured its noise floor) and ``"vs-baselines"``
    (when it measured the spec's ``baselines``), ``"utilisation"`` (a batches step with
    ``num_workers`` swept; :func:`notes` says
    why a figure was left out).

    Parameters
    ----------
    ds
        Results Dataset (schema version 1).

    Returns
    -------
    dict of str to matplotlib.figure.Figure
    """
    search, ds = (ds if "search_score" in ds else None), ds.iotune.dense()
    metrics: list[tuple[str, str | None]] = []
    if "write_MiBps" in ds:
        metrics.append(("write", None))
    if "read_MiBps" in ds and "pattern" in ds.dims:
        metrics += [("read", str(p)) for p in ds["pattern"].values]
    figures = {f"{m}-{p}" if p else m: throughput(ds, metric=m, pattern=p) for m, p in metrics}
    if _params(ds):
        for m in dict.fromkeys(m for m, _ in metrics):
            figures[f"heatmap-{m}"] = heatmap(ds, metric=m)
    if "file_bytes" in ds:
        for m, p in metrics:
            key = f"size-vs-{m}-{p}" if p else f"size-vs-{m}"
            figures[key] = size_vs_throughput(ds, metric=m, pattern=p)
    if has_limit(ds):
        figures["fraction-of-limit"] = fraction_of_limit(ds)
    if "noise_write_MiBps" in ds:
        figures["noise"] = noise_over_time(ds)
    if has_baselines(ds) and speedup.vs_baselines(ds, speedup.each_best(ds)):
        figures["vs-baselines"] = vs_baselines(ds)
    if has_utilisation(ds):
        figures["utilisation"] = utilisation(ds)
    if search is not None:
        figures["convergence"] = convergence(search)
        figures["importance"] = importance(search)
    return figures


def notes(ds: xr.Dataset) -> list[str]:
    """Why standard figures are missing from :func:`all_figures` for ``ds``, one line each."""
    found = []
    if not _params(ds):
        found.append("heatmaps skipped: nothing was swept")
    if not has_limit(ds):
        found.append(NO_LIMIT_NOTE)
    return found
