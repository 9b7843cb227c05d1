"""The sweep's own noise: one reference configuration measured through the run.

The probes (:mod:`iotune.runner.schedule`) are single repeats of the plan's
first trial, spread evenly among the other work.  Whatever moved them apart
(the machine's drift, neighbours, the page cache's housekeeping) moved every
other trial too, so their spread is the smallest difference between two
configurations this run could see.  The floor of a metric is the relative
width of the 95 % interval of the probes' median (order statistics, as for
every trial); below six probes, where no such interval exists, it is their
range over the median.  Two probes are one difference, which may well be 0 %:
a floor needs :data:`MIN_PROBES` (a run stopped early has none).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping
from typing import Any

import numpy as np

from iotune.measuring import precision
from iotune.model.records import TrialResult
from iotune.runner.plan import Plan
from iotune.runner.schedule import reference_trial

METHOD = (
    "single repeats of the reference configuration spread evenly through the run; "
    "floor = width of the 95 % interval of their median (order statistics; their range "
    "below 6 probes) over the median"
)


#: the fewest probes a floor is measured from
MIN_PROBES = 3


def floor(values: list[float]) -> float:
    """The relative width of the probes' interval (their range below 6); NaN below
    :data:`MIN_PROBES`."""
    data = [v for v in values if not math.isnan(v)]
    if len(data) < MIN_PROBES:
        return math.nan
    low, high = precision.median_interval(data) or (min(data), max(data))
    middle = statistics.median(data)
    return (high - low) / middle if middle > 0 else math.nan


def noise_variables(
    plan: Plan, probes: Mapping[int, TrialResult]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Dataset variables over ``probe`` and attributes for the probes of a run."""
    ordered = [probes[k] for k in sorted(probes) if probes[k].status == "ok" and probes[k].write]
    patterns = plan.sweep.read.patterns
    write = np.array([p.write[0]["MiBps"] for p in ordered], dtype=float)
    reads = np.full((len(ordered), len(patterns)), np.nan)
    for i, probe in enumerate(ordered):
        for j, pattern in enumerate(patterns):
            runs = probe.reads.get(pattern)
            if runs:
                reads[i, j] = runs[0]["MiBps"]
    start = min((p.started for p in ordered), default=0.0)
    offsets = np.array([p.started - start for p in ordered], dtype=float)
    variables = {
        "noise_write_MiBps": (
            ("probe",),
            write,
            {"units": "MiB/s", "long_name": "write throughput of the reference configuration"},
        ),
        "noise_read_MiBps": (
            ("probe", "pattern"),
            reads,
            {"units": "MiB/s", "long_name": "read throughput of the reference configuration"},
        ),
        "noise_time": (
            ("probe",),
            offsets,
            {"units": "s", "long_name": "when the probe ran, from the first probe"},
        ),
    }
    floors = {"write": floor(list(write))}
    for j, pattern in enumerate(patterns):
        floors[f"read:{pattern}"] = floor(list(reads[:, j]))
    reference = reference_trial(plan)
    shown = f"{reference.label()} (trial {reference.id})" if reference else ""
    attrs = {
        "noise_reference": shown,
        "noise_floor": json.dumps(
            {k: None if math.isnan(v) else round(v, 4) for k, v in floors.items()}
        ),
        "noise_method": METHOD,
        "noise_probes": len(ordered),
    }
    return variables, attrs
