"""The results variables only sweeps with the ``batches`` read pattern have.

Kept apart from :mod:`iotune.results.dataset` so other sweeps keep exactly
the schema they had.  Both variables lie along the same dimensions as
``read_MiBps`` (NaN for the other patterns); the pattern's configuration is
the ``batches`` attribute (JSON), which ``recommend`` exports from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import xarray as xr

    from iotune.model.records import TrialResult
    from iotune.runner.plan import Plan

PATTERN = "batches"
#: name -> (key of a read entry, units, long_name), per repeat
VARIABLES = {
    "read_samples_per_s": ("samples_per_s", "1/s", "samples delivered per second (batches)"),
    "read_first_batch_s": (
        "first_batch_s",
        "s",
        "time to the first batch, loader workers' start included (batches)",
    ),
    "read_utilisation": (
        "utilisation",
        "1",
        "accelerator utilisation after the first batch: compute over total time (batches step)",
    ),
}
#: who read the batches: torch's DataLoader over the exported Dataset, or iotune's loader
LOADER = "read_loader"


def assign(ds: xr.Dataset, plan: Plan, done: Mapping[str, TrialResult]) -> xr.Dataset:
    """``ds`` with the batches variables and the ``batches`` attribute; as it was without."""
    sweep = plan.sweep
    patterns = sweep.read.patterns
    if PATTERN not in patterns:
        return ds
    pdims = plan.dims
    shape = tuple(len(plan.coords[d]) for d in pdims)
    p = patterns.index(PATTERN)
    arrays = {n: np.full((*shape, len(patterns), sweep.measure.most), np.nan) for n in VARIABLES}
    loaders = np.full(shape, "", dtype=object)
    for point in plan.points:
        result = done.get(point.trial_id) if point.trial_id else None
        if result is None or result.status != "ok":
            continue
        index = tuple(plan.coords[d].index(point.coords[d]) for d in pdims)
        runs = result.reads.get(PATTERN, [])
        where: tuple = (*index, p, slice(0, len(runs)))
        for name, (key, *_rest) in VARIABLES.items():
            arrays[name][where] = [r.get(key, np.nan) for r in runs]
        loaders[index] = next((str(r["loader"]) for r in runs if r.get("loader")), "")
    dims = (*pdims, "pattern", "repeat")
    data_vars: dict[str, Any] = {
        name: (dims, arrays[name], {"units": units, "long_name": long})
        for name, (_key, units, long) in VARIABLES.items()
    }
    data_vars[LOADER] = (pdims, loaders.astype(str), {"long_name": "loader of the batches"})
    ds = ds.assign(data_vars)
    if sweep.read.batches is not None:
        ds.attrs["batches"] = json.dumps(sweep.read.batches.to_dict())
    # the sweep's loaders, in provenance beside the libraries' versions
    ds.attrs["provenance_loader"] = ", ".join(sorted({str(v) for v in loaders.flat if v}))
    return ds


def loader_at(ds: xr.Dataset, coords: Mapping[str, Any]) -> str:
    """``torch``, ``iotune`` or ``xbatcher``: who measured the batches at ``coords``.

    Empty: unknown.

    Results written before the loader was recorded were all measured by iotune's.
    """
    if LOADER not in ds:
        return "iotune" if "read_samples_per_s" in ds else ""
    try:
        return str(ds[LOADER].sel(**dict(coords)).values.ravel()[0])
    except (KeyError, ValueError, IndexError):
        return ""


def batches_of(ds: xr.Dataset) -> dict[str, Any] | None:
    """The ``read.batches`` a results Dataset measured, ``None`` without the pattern."""
    if "pattern" not in ds.coords or PATTERN not in [str(p) for p in ds["pattern"].values]:
        return None
    try:
        found = json.loads(str(ds.attrs.get("batches") or "{}"))
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def loader_figures(ds: xr.Dataset, coords: Mapping[str, Any]) -> dict[str, float]:
    """The medians of samples/s and time to first batch at the grid point ``coords``.

    Empty when the results have no batches pattern or no such point.
    """
    if "read_samples_per_s" not in ds:
        return {}
    try:
        point = ds.sel(pattern=PATTERN, **dict(coords))
    except (KeyError, ValueError):
        return {}
    found = {}
    for name, (key, *_rest) in VARIABLES.items():
        values = np.asarray(point[name].values, dtype=float).ravel()
        if values.size and not np.isnan(values).all():
            found[key] = float(np.nanmedian(values))
    return found


def loader_note(ds: xr.Dataset) -> str:
    """Which loader measured the batches figures, in a line (empty without the pattern)."""
    if "read_samples_per_s" not in ds:
        return ""
    found = str(ds.attrs.get("provenance_loader") or "iotune")  # older results: iotune's
    torch = ds.attrs.get("provenance_version_torch")
    xbatcher = ds.attrs.get("provenance_version_xbatcher")
    said = {
        "torch": f"torch's DataLoader (torch {torch or '?'}) over the exported Dataset",
        "xbatcher": f"xbatcher's BatchGenerator (xbatcher {xbatcher or '?'}) over open_dataset",
        "iotune": "iotune's own loader (not torch's DataLoader)",
    }
    if found in said:
        return f"read:batches measured by {said[found]}"
    return f"read:batches measured by {found} (each point's loader: read_loader)"
