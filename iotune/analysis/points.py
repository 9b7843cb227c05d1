"""A results grid point as an export target: the workload to describe and the MPI-IO hints.

Shared by :mod:`iotune.analysis.recommend` and anything else that turns a point of a
results Dataset into something to paste.  Everything else about a point (its
coordinates, label, effective settings) is read with ``ds.iotune``
(:mod:`iotune.results.accessor`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import iotune.results.accessor  # noqa: F401  (registers ds.iotune)
from iotune.backends.exports_base import Target
from iotune.model.spec import StorageSpec

if TYPE_CHECKING:
    import xarray as xr


def target_of(ds: xr.Dataset, variable: str | None = None) -> Target:
    """The workload as the exports' :class:`~iotune.backends.exports_base.Target`."""
    workload = ds.iotune.workload
    shape = workload.get("shape") or {}
    name = variable or workload.get("variable") or "data"
    return Target(
        name, tuple(shape), tuple(int(n) for n in shape.values()), workload.get("dtype", "int16")
    )


def storage_of(ds: xr.Dataset) -> StorageSpec | None:
    """The object store a results Dataset measured (its ``storage_*`` provenance).

    ``None`` for a sweep on local storage.  The endpoint, region and anonymity
    are those of the spec; credentials were never recorded.
    """
    found = ds.iotune.provenance
    url = str(found.get("storage_url") or "")
    if not url:
        return None
    endpoint = str(found.get("storage_endpoint") or "")
    return StorageSpec(
        url,
        # the provenance says "(the provider's default)" when the spec named none
        endpoint if endpoint.startswith(("http://", "https://")) else None,
        str(found.get("storage_region") or "") or None,
        str(found.get("storage_anonymous", "false")).lower() == "true",
    )


def hints_of(ds: xr.Dataset, settings: Mapping[str, Any]) -> dict[str, Any] | None:
    """The MPI-IO hints of a point as ``{key: value}``; ``None`` when hints were not swept.

    Taken from the point's ``hint_values`` (what the MPI-IO backend records), else
    from the hint set named by ``hints`` in the Dataset's ``hint_sets`` attribute
    (``ds.iotune.hint_sets``).
    """
    value = settings.get("hints")
    if isinstance(settings.get("hint_values"), Mapping):
        return dict(settings["hint_values"])
    if value is None:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    return dict(ds.iotune.hint_sets.get(str(value), {}))
