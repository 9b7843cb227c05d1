"""The best configurations' speedup over the named baselines, drawn as bars with intervals.

Every bar says what it is: its value on top (``1.91x``), its baseline (and that
baseline's layout) under its group, and in the legend the read pattern and the
configuration that is fastest on it.  The log axis is labelled at 1, 2 and 5 per decade
(3 too within a decade, every integer within half a decade, 1 only over a wide
range), never at every minor tick, so its
labels do not collide.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from iotune.core.errors import ResultsError
from iotune.results import speedup
from iotune.results.baselines import has_baselines
from iotune.results.labels import label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: decades of the axis above which only powers of ten are labelled
WIDE = 2.0
#: decades below which a decade is labelled at every integer multiple
NARROW = 0.5


def vs_baselines(ds: xr.Dataset) -> Figure:
    """Each read pattern's best configuration against each baseline: labelled speedup bars.

    One group of bars per baseline, one bar per pattern, the height the speedup
    (median MiB/s ratio) and the whisker its bootstrap interval
    (:mod:`iotune.results.speedup`), on a log scale with 1 (no gain) marked.

    Raises
    ------
    ResultsError
        The results hold no measured baselines (the spec's ``baselines``).
    """
    from matplotlib.figure import Figure

    chosen = speedup.each_best(ds) if has_baselines(ds) else {}
    rows = speedup.vs_baselines(ds, chosen) if chosen else []
    if not rows:
        raise ResultsError("these results hold no measured baselines (the spec's baselines)")
    labels = list(dict.fromkeys(r["baseline"] for r in rows))
    patterns = list(dict.fromkeys(r["pattern"] for r in rows))
    width = 0.8 / len(patterns)
    bars = len(labels) * len(patterns)
    fig = Figure(
        figsize=(max(5.5, 0.75 * bars + 2.5), 4.4 + 0.2 * len(patterns)), layout="constrained"
    )
    ax = fig.subplots()
    for j, pattern in enumerate(patterns):
        found = {r["baseline"]: r for r in rows if r["pattern"] == pattern}
        x = np.arange(len(labels)) + (j - (len(patterns) - 1) / 2) * width
        _bars(
            ax,
            x,
            [found.get(b) for b in labels],
            width,
            f"read:{pattern}: {label(chosen[pattern])}",
        )
    ax.axhline(1.0, color="0.3", lw=0.8)
    layouts = speedup.layouts(ds)
    ax.set_xticks(np.arange(len(labels)), [f"{b}\n{layouts.get(b, '')}" for b in labels])
    ax.tick_params(axis="x", labelsize="small")
    _log_axis(ax, [r[k] for r in rows for k in ("low", "high", "speedup")])
    ax.set_ylabel("speedup of the best (x, log)")
    ax.set_title(
        f"{ds.attrs.get('name', '')}: each pattern's best over the baselines\n"
        f"(bars: median ratio; whiskers: {speedup.CONFIDENCE:.0%} bootstrap interval)",
        fontsize="medium",
        wrap=True,  # a long sweep name: wrapped at the figure's edges, not cut off
    )
    fig.legend(  # below the axes: over them it could hide a bar or a whisker
        *ax.get_legend_handles_labels(),
        loc="outside lower center",
        fontsize="x-small",
        title="bar colour: the read pattern, and its fastest configuration",
        title_fontsize="x-small",
    )
    ax.grid(alpha=0.3, axis="y")
    return fig


def _bars(ax: Axes, x: np.ndarray, row: list[Any], width: float, name: str) -> None:
    """One pattern's bars over the baselines, each labelled with its speedup."""
    height = np.array([r["speedup"] if r else np.nan for r in row], dtype=float)
    low = np.array([r["low"] if r else np.nan for r in row], dtype=float)
    high = np.array([r["high"] if r else np.nan for r in row], dtype=float)
    err = np.vstack([height - low, high - height])
    ax.bar(x, height, width, yerr=err, capsize=3, label=name)
    # at the foot of each bar, boxed: a whisker may cross it, and no top collides with a cap
    foot = ax.get_xaxis_transform()
    for where, h in zip(x, height, strict=True):
        if math.isfinite(h):
            ax.text(
                where,
                0.02,
                speedup.times(h),
                transform=foot,
                ha="center",
                va="bottom",
                fontsize="x-small",
                gid="bar-label",
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
            )


def _log_axis(ax: Axes, values: list[float]) -> None:
    """A log axis labelled ``0.5x 1x 2x 5x`` (powers of ten only over a wide range)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    finite = [v for v in values if math.isfinite(v) and v > 0] or [1.0]
    lo, hi = min(min(finite), 1.0) / 1.3, max(max(finite), 1.0) * 1.3
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    decades = math.log10(hi / lo)
    if decades > WIDE:
        subs: tuple[float, ...] = (1.0,)
    elif decades > 1:
        subs = (1.0, 2.0, 5.0)
    elif decades > NARROW:
        subs = (1.0, 2.0, 3.0, 5.0)
    else:  # speedups near 1x: 1 to 9 per decade, or 1x would be the only label
        subs = (1.0, 1.5, *(float(k) for k in range(2, 10)))
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}x"))
    ax.yaxis.set_minor_formatter(NullFormatter())
