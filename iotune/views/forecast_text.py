"""The lines ``plan`` and ``run`` print about what a sweep is predicted to cost."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iotune.core.units import format_size, format_span
from iotune.runner.forecast import Forecast

#: the worker counts ``plan`` predicts the wall time of
WORKER_COUNTS = (1, 2, 4, 8, 16)


def forecast_lines(
    forecast: Forecast,
    *,
    scratch: Path,
    per_host: int = 1,
    workers: Sequence[int] = WORKER_COUNTS,
) -> list[str]:
    """The predicted wall time per worker count, the longest trial, and the disk needed."""
    walls = {k: forecast.wall(k, per_host=per_host) for k in workers}
    shown = " · ".join(
        f"{k} {'worker' if k == 1 else 'workers'} {format_span(walls[k])}" for k in walls
    )
    lines = [f"predicted wall time: {shown}"]
    if all(t.storage_bound for t in forecast.trials) and len(walls) > 1:
        lines.append(
            f"  trials on local storage run {per_host} at a time per host (per_host), "
            "so more workers on one host buy little; several hosts run host-parallel"
        )
    if forecast.trials:
        longest = max(forecast.trials, key=lambda t: t.seconds)
        lines.append(
            f"  longest trial: {longest.trial.id} {longest.trial.label()} "
            f"({format_span(longest.seconds)} of its repeats)"
        )
    need = forecast.disk_bytes * per_host
    free = shutil.disk_usage(scratch).free if scratch.is_dir() else None
    room = f" (free: {format_size(free, exact=False)})" if free is not None else ""
    lines.append(
        f"scratch needed: up to {format_size(need, exact=False)} at a time in {scratch}{room}"
    )
    return lines


def dominating_lines(forecast: Forecast, share: float, *, at_least: float = 0.0) -> list[str]:
    """A warning line for each trial predicted to take more than ``share`` of the sweep
    and at least ``at_least`` seconds."""
    lines = []
    for cost, part in forecast.dominating(share):
        if cost.seconds < at_least:
            continue
        lines.append(
            f"trial {cost.trial.id} ({cost.trial.label()}) is predicted to take "
            f"{format_span(cost.seconds)}, {part:.0%} of the sweep's trials "
            f"({format_span(cost.seconds / part)}): iotune plan shows the forecast per trial"
        )
    return lines


def forecast_dict(forecast: Forecast, *, per_host: int = 1) -> dict[str, Any]:
    """The forecast as JSON-ready data (``plan --format json``)."""
    return {
        "wall_s": {str(k): round(forecast.wall(k, per_host=per_host), 2) for k in WORKER_COUNTS},
        "scratch_bytes": forecast.disk_bytes * per_host,
        "trials": {t.trial.id: round(t.seconds, 3) for t in forecast.trials},
    }
