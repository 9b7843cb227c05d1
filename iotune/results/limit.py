"""The device limit on results: throughput as a fraction of what the storage can do.

The limit itself is measured by :func:`iotune.runner.calibrate.calibrate` (a
file system) or :func:`iotune.runner.calibrate_store.calibrate_store` (an
object store: the best PUT and GET throughput over requests in flight).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import xarray as xr

#: ``device_limit_kind`` of an object store's limit (its calibration's ``kind``)
STORE = "object store"


def limit_name(kind: str) -> str:
    """How results name a limit of ``kind``: "the store's limit" or "the device limit"."""
    return "the store's limit" if kind == STORE else "the device limit"


def attach_limit(ds: xr.Dataset, limit: dict[str, Any] | None) -> xr.Dataset:
    """Add ``fraction_of_limit`` and the ``device_limit_*`` attributes to results.

    ``fraction_of_limit`` has a ``metric`` dimension (``write``, ``read:<pattern>``)
    in place of ``pattern``: ``write_MiBps`` over the write limit and ``read_MiBps``
    over the cold-read limit.  Throughput counts raw bytes, so compressed formats
    can exceed 1.  In-memory backends touch no device and get NaN.  An object
    store's limit (``kind`` "object store") is its best PUT and GET throughput;
    ``device_limit_kind`` says which kind of limit the results carry.

    Parameters
    ----------
    ds
        Results Dataset (schema version 1).
    limit
        A calibration from :func:`calibrate` or :func:`load_limit`; ``None``
        returns ``ds`` unchanged.

    Returns
    -------
    xarray.Dataset
        A new Dataset; ``ds`` is not modified.
    """
    import xarray as xr

    if limit is None:
        return ds
    write, read = float(limit["write_MiBps"]), float(limit["read_MiBps"])
    pieces = []
    if "write_MiBps" in ds:
        pieces.append((ds["write_MiBps"] / write).expand_dims(metric=["write"]))
    if "read_MiBps" in ds:
        for p in ds["pattern"].values:
            one = ds["read_MiBps"].sel(pattern=p, drop=True) / read
            pieces.append(one.expand_dims(metric=[f"read:{p}"]))
    fraction = xr.concat(pieces, dim="metric", coords="minimal", join="outer")
    if "backend" in fraction.dims:
        stored = [not _in_memory(str(b)) for b in fraction["backend"].values]
        fraction = fraction.where(xr.DataArray(stored, dims="backend"))
    elif _in_memory(str(ds.attrs.get("backends", ""))):
        fraction = fraction * float("nan")
    fraction = fraction.transpose(..., "metric", "repeat")
    kind = str(limit.get("kind", "file system"))
    fraction.attrs = {
        "units": "1",
        "long_name": f"throughput as a fraction of {limit_name(kind)} "
        "(write_MiBps / device_limit_write_MiBps, read_MiBps / device_limit_read_MiBps)",
    }
    out = ds.assign(fraction_of_limit=fraction)
    out.attrs.update(
        device_limit_write_MiBps=write,
        device_limit_read_MiBps=read,
        device_limit_method=f"write: {limit.get('write_method', '?')}; "
        f"read: {limit.get('read_method', '?')}",
        device_limit_measured=str(limit.get("measured", "")),
        device_limit_key=str(limit.get("key", "")),
        device_limit_kind=kind,
    )
    return out


def _in_memory(name: str) -> bool:
    """Whether backend ``name`` keeps its data in memory: no device limit to compare with.

    A results file's backend that is not installed here (a plugin's) is taken as storing.
    """
    from iotune.backends import backend_names, get_backend

    return name in backend_names() and bool(get_backend(name).in_memory)
