"""The best configurations' speedup over the named baselines, drawn as bars with intervals."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from iotune.core.errors import ResultsError
from iotune.results import speedup
from iotune.results.baselines import has_baselines

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def vs_baselines(ds: xr.Dataset) -> Figure:
    """Each read pattern's best configuration against each baseline: speedup bars.

    One group of bars per baseline, one bar per pattern, the height the speedup
    (median MiB/s ratio) and the whisker its bootstrap interval
    (:mod:`iotune.results.speedup`), on a log scale with 1 (no gain) marked.

    Raises
    ------
    ResultsError
        The results hold no measured baselines (the spec's ``baselines``).
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import ScalarFormatter

    rows = speedup.vs_baselines(ds, speedup.each_best(ds)) if has_baselines(ds) else []
    if not rows:
        raise ResultsError("these results hold no measured baselines (the spec's baselines)")
    labels = list(dict.fromkeys(r["baseline"] for r in rows))
    patterns = list(dict.fromkeys(r["pattern"] for r in rows))
    width = 0.8 / len(patterns)
    fig = Figure(figsize=(max(5.0, 1.6 * len(labels) + 2), 4), layout="constrained")
    ax = fig.subplots()
    for j, pattern in enumerate(patterns):
        found = {r["baseline"]: r for r in rows if r["pattern"] == pattern}
        x = np.arange(len(labels)) + (j - (len(patterns) - 1) / 2) * width
        row = [found.get(label) for label in labels]
        height = np.array([r["speedup"] if r else np.nan for r in row], dtype=float)
        low = np.array([r["low"] if r else np.nan for r in row], dtype=float)
        high = np.array([r["high"] if r else np.nan for r in row], dtype=float)
        err = np.vstack([height - low, high - height])
        ax.bar(x, height, width, yerr=err, capsize=3, label=f"read:{pattern}")
    ax.axhline(1.0, color="0.3", lw=0.8)
    ax.set_yscale("log")
    for axis in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
        axis(ScalarFormatter())
    ax.set_xticks(np.arange(len(labels)), labels)
    ax.set_ylabel("speedup of the best (x, log)")
    ax.set_title(
        f"{ds.attrs.get('name', '')}: each pattern's best over the baselines\n"
        f"(bars: median ratio; whiskers: {speedup.CONFIDENCE:.0%} bootstrap interval)",
        fontsize="medium",
        wrap=True,  # a long sweep name: wrapped at the figure's edges, not cut off
    )
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3, axis="y")
    return fig
