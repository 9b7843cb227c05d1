"""The results variables and attributes only launched (MPI) trials have.

Kept apart from :mod:`iotune.results.dataset` so a sweep without MPI trials has
exactly the schema it had before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.backends import get_backend

if TYPE_CHECKING:
    from iotune.model.records import TrialResult
    from iotune.runner.plan import Plan

_TEXT_VARS = {
    "hints_effective": "MPI-IO hints in effect after MPI_File_open (MPI_File_get_info, JSON)",
    "hints_ignored": "requested hints whose effective value differs (JSON)",
    "stripe_layout": "Lustre striping requested and read back with lfs getstripe (JSON)",
}
_SPREAD_VARS = {
    "write_s_fastest_rank": "write time of the fastest rank (write_s is the slowest's)",
    "read_s_fastest_rank": "read time of the fastest rank (read_s is the slowest's)",
}


def launched(plan: Plan) -> bool:
    """Whether any trial of ``plan`` runs as launched ranks."""
    return any(get_backend(t.backend).launches(t.params) for t in plan.trials)


def extras(plan: Plan, done: Mapping[str, TrialResult]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Data variables and attributes for the launched trials of ``plan``.

    Returns
    -------
    tuple
        ``(data_vars, attrs)`` to merge into the results Dataset; both empty
        when no trial is launched.
    """
    if not launched(plan):
        return {}, {}
    pdims = plan.dims
    shape = tuple(len(plan.coords[d]) for d in pdims)
    patterns, repeats = plan.sweep.read.patterns, plan.sweep.measure.most
    text = {name: np.full(shape, "", dtype=object) for name in _TEXT_VARS}
    write = np.full((*shape, repeats), np.nan)
    read = np.full((*shape, len(patterns), repeats), np.nan)
    stored = []
    for point in plan.points:
        result = done.get(point.trial_id) if point.trial_id else None
        if result is None or result.status != "ok" or "hints_effective" not in result.stored:
            continue
        index: tuple[int, ...] = tuple(plan.coords[d].index(point.coords[d]) for d in pdims)
        info = result.stored
        stored.append(info)
        text["hints_effective"][index] = json.dumps(info["hints_effective"], sort_keys=True)
        text["hints_ignored"][index] = json.dumps(info["hints_ignored"], sort_keys=True)
        text["stripe_layout"][index] = json.dumps(info["stripe"], sort_keys=True)
        where: tuple[Any, ...] = (*index, slice(0, len(result.write)))
        write[where] = [w.get("s_fastest_rank", np.nan) for w in result.write]
        for p, pattern in enumerate(patterns):
            runs = result.reads.get(pattern, [])
            if runs:
                cells: tuple[Any, ...] = (*index, p, slice(0, len(runs)))
                read[cells] = [r.get("s_fastest_rank", np.nan) for r in runs]
    data_vars: dict[str, Any] = {
        name: (pdims, text[name], {"long_name": long}) for name, long in _TEXT_VARS.items()
    }
    for (name, long), values, dims in zip(
        _SPREAD_VARS.items(),
        (write, read),
        ((*pdims, "repeat"), (*pdims, "pattern", "repeat")),
        strict=True,
    ):
        data_vars[name] = (dims, values, {"units": "s", "long_name": long})
    return data_vars, _attrs(plan, stored)


def _attrs(plan: Plan, stored: list[dict[str, Any]]) -> dict[str, Any]:
    from iotune.mpi.lustre import not_applied_note

    attrs: dict[str, Any] = {"hint_sets": json.dumps(plan.sweep.hints, sort_keys=True)}
    if stored:
        attrs["mpi_library"] = stored[0]["mpi_library"]
        attrs["mpi_launcher"] = stored[0]["launcher"]
    skipped = {
        s["stripe"]["fs_type"]
        for s in stored
        if s["stripe"]["requested"] and not s["stripe"]["applied"]
    }
    if skipped:
        attrs["stripe_settings"] = "; ".join(not_applied_note(fs) for fs in sorted(skipped))
    elif any(s["stripe"]["applied"] for s in stored):
        attrs["stripe_settings"] = "applied with lfs setstripe; read back with lfs getstripe"
    return attrs
