"""The named baselines' measurements in the results, along their own ``baseline`` dimension.

The grid's variables keep their dimensions; each baseline (the spec's
``baselines``, :mod:`iotune.runner.baselines`) adds a position along
``baseline`` to variables named ``baseline_*``: throughput per pattern and
repeat, stored size, status, the layout measured.  Only sweeps with
``baselines`` have them, so every other sweep keeps exactly its schema.
:func:`keep` carries them through :func:`iotune.results.merge.merge`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import xarray as xr

    from iotune.model.records import TrialResult
    from iotune.runner.plan import Plan

DIM = "baseline"
#: the string variables along ``baseline`` (empty where a baseline was not measured)
STRINGS = {
    "baseline_name": "the baseline: library, dask-auto, balanced, cloud or source",
    "baseline_backend": "the backend the baseline was measured with",
    "baseline_chunks": "the baseline's chunks, as its library computed them",
    "baseline_codec": "the baseline's codec",
    "baseline_status": "ok, failed, not_applicable or pending",
    "baseline_error": "why the baseline failed or does not apply",
    "baseline_trial_id": "the trial that measured the baseline (shared with a grid point if equal)",
    "baseline_effective": "effective parameters of the baseline's trial (JSON)",
}


def assign(ds: xr.Dataset, plan: Plan, done: Mapping[str, TrialResult]) -> xr.Dataset:
    """``ds`` with the ``baseline_*`` variables of ``plan``'s baselines from ``done``."""
    patterns, nrep = plan.sweep.read.patterns, int(ds.sizes.get("repeat", 1))
    n = len(plan.baselines)
    read = np.full((n, len(patterns), nrep), np.nan)
    seconds = np.full((n, len(patterns), nrep), np.nan)
    write, size = np.full((n, nrep), np.nan), np.full(n, np.nan)
    cache = np.full((n, len(patterns), nrep), "", dtype=object)
    text = {name: np.full(n, "", dtype=object) for name in STRINGS}
    for i, point in enumerate(plan.baselines):
        text["baseline_name"][i], text["baseline_backend"][i] = point.name, point.backend
        if not point.applicable:
            text["baseline_status"][i], text["baseline_error"][i] = "not_applicable", point.reason
            continue
        effective = point.effective or {}
        text["baseline_chunks"][i] = str(effective.get("chunks", ""))
        text["baseline_codec"][i] = str(effective.get("codec", ""))
        text["baseline_trial_id"][i] = point.trial_id
        text["baseline_effective"][i] = json.dumps({"backend": point.backend, **effective})
        result = done.get(point.trial_id or "")
        if result is None:
            text["baseline_status"][i] = "pending"
            continue
        text["baseline_status"][i], text["baseline_error"][i] = result.status, result.error
        if result.status != "ok":
            continue
        runs = [w["MiBps"] for w in result.write][:nrep]
        write[i, : len(runs)] = runs
        for p, pattern in enumerate(patterns):
            reads = result.reads.get(pattern, [])[:nrep]
            read[i, p, : len(reads)] = [r["MiBps"] for r in reads]
            seconds[i, p, : len(reads)] = [r.get("s", np.nan) for r in reads]
            cache[i, p, : len(reads)] = [r["cache"] for r in reads]
        size[i] = result.file_bytes if result.file_bytes is not None else np.nan
    variables: dict[str, Any] = {
        "baseline_read_MiBps": (
            (DIM, "pattern", "repeat"),
            read,
            {"units": "MiB/s", "long_name": "read throughput of the baseline (bytes delivered)"},
        ),
        "baseline_read_s": (  # the time a call of the user's own code ranks by
            (DIM, "pattern", "repeat"),
            seconds,
            {"units": "s", "long_name": "read time of the baseline (incl. open and close)"},
        ),
        "baseline_read_cache": (
            (DIM, "pattern", "repeat"),
            cache,
            {"long_name": "cache state of the baseline's read: cold, warm or not-cold"},
        ),
        "baseline_write_MiBps": (
            (DIM, "repeat"),
            write,
            {"units": "MiB/s", "long_name": "write throughput of the baseline"},
        ),
        "baseline_file_bytes": (
            (DIM,),
            size,
            {"units": "bytes", "long_name": "stored size of the baseline"},
        ),
    }
    for name, long in STRINGS.items():
        variables[name] = ((DIM,), text[name], {"long_name": long})
    return ds.assign(variables).assign_coords({DIM: [p.label for p in plan.baselines]})


def has_baselines(ds: xr.Dataset) -> bool:
    """Whether ``ds`` holds measured baselines (a sweep with ``baselines``)."""
    return DIM in ds.dims and "baseline_read_MiBps" in ds


def strip(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` without its baselines (to merge grids, whose dims they do not share)."""
    return ds.drop_dims(DIM, errors="ignore")


def keep(merged: xr.Dataset, sources: Sequence[xr.Dataset]) -> xr.Dataset:
    """``merged`` with the baselines of ``sources``: each label from the first that measured it."""
    import xarray as xr

    parts: dict[str, xr.Dataset] = {}
    for ds in sources:
        if not has_baselines(ds):
            continue
        base = ds[[n for n in ds.data_vars if DIM in ds[n].dims]]
        for label in (str(v) for v in base[DIM].values):
            one = base.sel({DIM: [label]})
            measured = str(one["baseline_status"].values[0]) == "ok"
            if label not in parts or (measured and _status(parts[label]) != "ok"):
                parts[label] = one
    if not parts:
        return merged
    joined = xr.concat(list(parts.values()), dim=DIM, join="outer", fill_value=_FILL)
    axes = {d: merged[d].values for d in ("pattern", "repeat") if d in merged.dims}
    joined = joined.reindex(axes, fill_value=_FILL)
    return merged.assign({n: joined[n] for n in joined.data_vars})


_FILL: dict[str, Any] = {name: "" for name in (*STRINGS, "baseline_read_cache")}


def _status(ds: xr.Dataset) -> str:
    return str(ds["baseline_status"].values[0])
