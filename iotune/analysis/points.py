"""A results grid point as plain data: its label, effective settings and export target.

Shared by :mod:`iotune.analysis.recommend` and anything else that turns a point of a
results Dataset into something to paste.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from iotune.analysis import exports
from iotune.units import format_size

if TYPE_CHECKING:
    import xarray as xr

_BYTE_PARAMS = ("chunk_cache", "stripe_size", "transfer_size")


def swept(ds: xr.Dataset) -> list[str]:
    """The swept parameters of ``ds`` (from its ``swept`` attribute)."""
    names = str(ds.attrs.get("swept", "")).split()
    return [d for d in names if d in ds.dims]


def label(coords: Mapping[str, Any]) -> str:
    """``chunks=8x128x128 codec=zlib chunk_cache=64MiB``."""
    parts = []
    for dim, value in coords.items():
        if dim in _BYTE_PARAMS and isinstance(value, int | float):
            value = format_size(int(value))
        parts.append(f"{dim}={value}")
    return " ".join(parts) or "(single configuration)"


def settings_of(ds: xr.Dataset, point: xr.Dataset, coords: Mapping[str, Any]) -> dict[str, Any]:
    """A point's effective parameters: its ``effective`` JSON, else coords and fixed ones."""
    text = str(point["effective"].values) if "effective" in point else ""
    if text:
        try:
            return dict(json.loads(text))
        except ValueError:
            pass  # fall back to what the coordinates say
    settings = json.loads(str(ds.attrs.get("fixed_parameters") or "{}"))
    backends = str(ds.attrs.get("backends", "")).split()
    if len(backends) == 1:
        settings["backend"] = backends[0]
    return {**settings, **coords}


def target_of(ds: xr.Dataset, variable: str | None = None) -> exports.Target:
    """The workload as the exports' :class:`~iotune.analysis.exports.Target`."""
    workload = json.loads(str(ds.attrs.get("workload") or "{}"))
    shape = workload.get("shape") or {}
    name = variable or workload.get("variable") or "data"
    return exports.Target(
        name, tuple(shape), tuple(int(n) for n in shape.values()), workload.get("dtype", "int16")
    )


def hints_of(ds: xr.Dataset, settings: Mapping[str, Any]) -> dict[str, Any] | None:
    """The MPI-IO hints of a point as ``{key: value}``; ``None`` when hints were not swept.

    Taken from the point's ``hint_values`` (what the MPI-IO backend records), else
    from the hint set named by ``hints`` in the Dataset's ``hint_sets`` attribute
    (JSON ``{name: {key: value}}``).
    """
    value = settings.get("hints")
    if isinstance(settings.get("hint_values"), Mapping):
        return dict(settings["hint_values"])
    if value is None:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    return dict(hint_sets(ds).get(str(value), {}))


def hint_sets(ds: xr.Dataset) -> dict[str, dict[str, Any]]:
    """The ``hint_sets`` attribute (JSON ``{name: {key: value}}``), or ``{}``."""
    try:
        sets = json.loads(str(ds.attrs.get("hint_sets") or "{}"))
    except ValueError:
        return {}
    return sets if isinstance(sets, dict) else {}


def empty_hint_sets(ds: xr.Dataset) -> list[str]:
    """Names of hint sets that set nothing (the MPI library's defaults)."""
    return [name for name, hints in hint_sets(ds).items() if not hints]


def plain(value: Any) -> Any:
    value = value.item() if hasattr(value, "item") else value
    return value.decode() if isinstance(value, bytes) else value
