"""The sweep's reference configuration through the run: its noise floor, drawn."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from iotune.core.errors import ResultsError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def noise_over_time(ds: xr.Dataset) -> Figure:
    """Throughput of the reference configuration at each probe, against time in the run.

    One line per metric, normalised to its median, with the noise floor
    (:mod:`iotune.results.noise`) as a band around 1.

    Raises
    ------
    ResultsError
        The results hold no noise probes (``measure.noise_probes: 0``, or older results).
    """
    from matplotlib.figure import Figure

    if "noise_write_MiBps" not in ds:
        raise ResultsError("these results hold no noise probes (measure.noise_probes)")
    floors = ds.iotune.noise
    series = {"write": ds["noise_write_MiBps"].values}
    for pattern in ds["pattern"].values:
        series[f"read:{pattern}"] = ds["noise_read_MiBps"].sel(pattern=pattern).values
    fig = Figure(figsize=(7, 4), layout="constrained")
    ax = fig.subplots()
    when = ds["noise_time"].values
    for metric, values in series.items():
        middle = np.nanmedian(values) if np.isfinite(values).any() else np.nan
        floor = floors.get(metric)
        shown = f"{metric} (floor {floor:.0%})" if floor is not None else metric
        ax.plot(when, values / middle, marker="o", label=shown)
    ax.axhline(1.0, color="0.5", lw=0.8)
    ax.set_xlabel("time in the run (s)")
    ax.set_ylabel("throughput / its median")
    ax.set_title(
        f"{ds.attrs.get('name', '')}: reference configuration through the run\n"
        f"{ds.attrs.get('noise_reference', '')}",
        fontsize="medium",
        wrap=True,  # a long reference label: wrapped at the figure's edges, not cut off
    )
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return fig


def draw_floor(ax: Axes, best: float, floor: float | None) -> None:
    """Shade the band below ``best`` that the run's noise could not tell apart from it."""
    if floor is None or not np.isfinite(best) or best <= 0:
        return
    ax.axhspan(best * (1 - floor), best, color="0.85", zorder=0, label="noise floor")
