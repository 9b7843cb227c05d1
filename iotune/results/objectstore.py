"""The results variables only object-storage sweeps have: requests, bytes, first bytes, cost.

Kept apart from :mod:`iotune.results.dataset` so a sweep on local storage has
exactly the schema it had before.  Requests are counted per kind along a
``request`` dimension (GET, PUT, HEAD, LIST, DELETE, POST).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.objectstore.meter import KINDS

if TYPE_CHECKING:
    import xarray as xr

    from iotune.model.records import TrialResult
    from iotune.model.spec import StorageSpec
    from iotune.runner.plan import Plan

#: name -> (key of a write or read entry, units, long_name), per repeat
_PER_REPEAT = {
    "bytes_fetched": ("bytes_in", "bytes", "bytes received from the store"),
    "bytes_sent": ("bytes_out", "bytes", "bytes sent to the store"),
    "retries": ("retries", "1", "requests retried after throttling (503 SlowDown, 429)"),
    "ttfb_median_ms": ("ttfb_ms_median", "ms", "median time to first byte of a GET"),
    "ttfb_p99_ms": ("ttfb_ms_p99", "ms", "99th percentile time to first byte of a GET"),
}
OVER_READ = (
    "bytes fetched / bytes the read needed (the selection's share of the stored bytes: "
    "bytes delivered x stored/raw); 1 reads nothing twice or in vain"
)
COST = "estimated cost of the requests and bytes out (the spec's storage.prices)"


def assign(ds: xr.Dataset, plan: Plan, done: Mapping[str, TrialResult]) -> xr.Dataset:
    """``ds`` with the variables, the ``request`` coordinate and attributes of :func:`extras`."""
    data_vars, attrs = extras(plan, done)
    ds = ds.assign_coords(request=list(KINDS)).assign(data_vars)
    ds.attrs.update(attrs)
    return ds


def extras(plan: Plan, done: Mapping[str, TrialResult]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Data variables, coordinates and attributes for a sweep with ``storage``.

    Returns ``(data_vars, attrs)``; both empty for a sweep on local storage.
    """
    storage = plan.sweep.storage
    if storage is None:
        return {}, {}
    pdims = plan.dims
    shape = tuple(len(plan.coords[d]) for d in pdims)
    patterns, repeats = plan.sweep.read.patterns, plan.sweep.measure.most
    wshape, rshape = (*shape, repeats), (*shape, len(patterns), repeats)
    arrays = {f"write_{n}": np.full(wshape, np.nan) for n in _PER_REPEAT}
    arrays |= {f"read_{n}": np.full(rshape, np.nan) for n in _PER_REPEAT}
    arrays["write_upload_s"] = np.full(wshape, np.nan)
    arrays["read_over_read"] = np.full(rshape, np.nan)
    arrays["write_requests"] = np.full((*shape, len(KINDS), repeats), np.nan)
    arrays["read_requests"] = np.full((*shape, len(patterns), len(KINDS), repeats), np.nan)
    arrays["write_cost"] = np.full(wshape, np.nan)
    arrays["read_cost"] = np.full(rshape, np.nan)
    prices = dict(storage.prices)
    for point in plan.points:
        result = done.get(point.trial_id) if point.trial_id else None
        if result is None or result.status != "ok":
            continue
        index = tuple(plan.coords[d].index(point.coords[d]) for d in pdims)
        share = (result.file_bytes or 0) / result.raw_bytes if result.raw_bytes else np.nan
        for r, entry in enumerate(result.write):
            _fill(arrays, "write", (*index, r), (*index, slice(None), r), entry, prices)
        for p, pattern in enumerate(patterns):
            for r, entry in enumerate(result.reads.get(pattern, [])):
                _fill(arrays, "read", (*index, p, r), (*index, p, slice(None), r), entry, prices)
                if plan.sweep.read.user_pattern(pattern) is not None:
                    continue  # what the user's code needed is not known: no over-read
                needed = entry["bytes"] * share
                arrays["read_over_read"][(*index, p, r)] = entry.get("bytes_in", 0) / needed
    return _variables(arrays, pdims, storage), _attrs(storage)


def _fill(
    arrays: dict[str, np.ndarray],
    step: str,
    where: tuple[Any, ...],
    kinds: tuple[Any, ...],
    entry: Mapping[str, Any],
    prices: Mapping[str, float],
) -> None:
    if "requests" not in entry:
        return
    for name, (key, *_rest) in _PER_REPEAT.items():
        arrays[f"{step}_{name}"][where] = entry.get(key, np.nan)
    counts = [entry["requests"].get(kind, 0) for kind in KINDS]
    arrays[f"{step}_requests"][kinds] = counts
    if step == "write":
        arrays["write_upload_s"][where] = entry.get("upload_s", np.nan)
    if prices:
        cost = sum(n * prices.get(kind, 0.0) for kind, n in zip(KINDS, counts, strict=True))
        cost += entry.get("bytes_in", 0) / 1e9 * prices.get("transfer_GB", 0.0)
        arrays[f"{step}_cost"][where] = cost


def _variables(
    arrays: dict[str, np.ndarray], pdims: tuple[str, ...], storage: StorageSpec
) -> dict[str, Any]:
    wdims, rdims = (*pdims, "repeat"), (*pdims, "pattern", "repeat")
    data_vars: dict[str, Any] = {}
    for name, (_key, units, long) in _PER_REPEAT.items():
        data_vars[f"write_{name}"] = (wdims, arrays[f"write_{name}"], _a(units, f"write: {long}"))
        data_vars[f"read_{name}"] = (rdims, arrays[f"read_{name}"], _a(units, f"read: {long}"))
    data_vars["write_upload_s"] = (
        wdims,
        arrays["write_upload_s"],
        _a("s", "upload time of a file written locally (part of write_s)"),
    )
    data_vars["read_over_read"] = (rdims, arrays["read_over_read"], _a("1", OVER_READ))
    data_vars["write_requests"] = (
        (*pdims, "request", "repeat"),
        arrays["write_requests"],
        _a("1", "requests of a write, by kind"),
    )
    data_vars["read_requests"] = (
        (*pdims, "pattern", "request", "repeat"),
        arrays["read_requests"],
        _a("1", "requests of a read, by kind"),
    )
    if storage.prices:
        data_vars["write_cost"] = (wdims, arrays["write_cost"], _a("1", f"write: {COST}"))
        data_vars["read_cost"] = (rdims, arrays["read_cost"], _a("1", f"read: {COST}"))
    return data_vars


def _a(units: str, long: str) -> dict[str, str]:
    return {"units": units, "long_name": long}


def _attrs(storage: StorageSpec) -> dict[str, Any]:
    import json

    attrs: dict[str, Any] = {
        "storage_url": storage.url,
        "storage_endpoint": storage.endpoint or "",
        "cold_object_reads": (
            "every read opens a new client (no cache, no open connection); a full read must "
            "fetch every stored byte (resident_fraction: the share it did not)"
        ),
    }
    if storage.prices:
        attrs["storage_prices"] = json.dumps(dict(storage.prices), sort_keys=True)
    return attrs
