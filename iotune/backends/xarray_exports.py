"""The xarray export: the ``open_dataset`` / ``open_zarr`` line that reads as measured.

A point measured with ``dask_chunks`` was read through
``SlabBackend.open_dataset``; this export is that call to paste, with the
``chunks=`` the trial used (``storage`` printed as the stored chunk shape, one
dask chunk per stored chunk), the read-side settings that travel with it
(netCDF-C's chunk cache, h5netcdf's ``driver_kwds``, zarr's configuration) and
dask's threads.  A point without ``dask_chunks`` has none: it was read through
the format's own library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Export, Target, chunk_shape
from iotune.backends.h5py.exports import xarray_h5netcdf_open
from iotune.core.errors import NotApplicable

#: the file each format's export opens, as the user names it
PATHS = {"netcdf4": "file.nc", "h5netcdf": "file.h5", "zarr": "store.zarr"}


def open_chunks(settings: Mapping[str, Any], target: Target) -> Any:
    """The ``chunks=`` value of the point: None, ``"auto"`` or ``{dim: n}``.

    ``storage`` is the stored chunk shape (the whole array when contiguous), or
    ``{}`` where the library chose the chunks: xarray then takes each stored
    chunk as one dask chunk, which is what the trial read.
    """
    label = settings.get("dask_chunks")
    if label is None:
        raise NotApplicable("the point was read through the format's library, not xarray")
    if label == "none":
        return None
    if label == "auto":
        return "auto"
    if label == "storage":
        stored = chunk_shape(settings)
        if stored == "auto":
            return {}
        shape = target.shape if stored == "contiguous" else stored
        return dict(zip(target.dims, (int(n) for n in shape), strict=True))
    pairs = (item.partition("=") for item in str(label).split(","))
    return {dim: int(n) for dim, _, n in pairs}


def dask_lines(settings: Mapping[str, Any]) -> list[str]:
    """``dask.config.set`` for the trial's ``dask_threads``; nothing when dask's default."""
    threads = settings.get("dask_threads")
    if threads is None:
        return []
    return [
        "import dask",
        f'dask.config.set(scheduler="threads", num_workers={int(threads)})',
    ]


def open_export(
    settings: Mapping[str, Any],
    target: Target,
    *,
    engine: str,
    before: list[str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Export:
    """The export: ``text`` to paste and ``value`` (``engine``, ``chunks`` and ``options``).

    Parameters
    ----------
    engine
        ``netcdf4``, ``h5netcdf`` or ``zarr`` (printed as ``xr.open_zarr``).
    before
        Lines that set up the read before the open (a chunk cache, zarr's config).
    options
        Further keywords of the open (``driver_kwds``, ``consolidated``).
    """
    chunks = open_chunks(settings, target)
    extra = dict(options or {})
    path = PATHS[engine]
    if engine == "zarr":
        args = [repr(path), *(f"{k}={v!r}" for k, v in extra.items()), f"chunks={chunks!r}"]
        call = f"ds = xr.open_zarr({', '.join(args)})"
    else:
        shown = [f"engine={engine!r}", *(f"{k}={v!r}" for k, v in extra.items())]
        call = f"ds = xr.open_dataset({path!r}, {', '.join(shown)}, chunks={chunks!r})"
    lines = ["import xarray as xr", *dask_lines(settings), *(before or []), call]
    value = {"engine": engine, "chunks": chunks, **extra}
    return {"text": "\n".join(lines), "value": value}


def netcdf4_cache_lines(settings: Mapping[str, Any]) -> list[str]:
    """``netCDF4.set_chunk_cache`` as the trial set it: netCDF-C's default for files opened next."""
    names = {"chunk_cache": "size", "cache_slots": "nelems", "cache_preemption": "preemption"}
    args = [f"{kw}={settings[k]!r}" for k, kw in names.items() if settings.get(k) is not None]
    if not args:
        return []
    return ["import netCDF4", f"netCDF4.set_chunk_cache({', '.join(args)})"]


def h5netcdf_export(settings: Mapping[str, Any], target: Target) -> Export:
    """``xr.open_dataset(..., engine="h5netcdf")`` with the read-side HDF5 properties."""
    try:
        options = {"driver_kwds": xarray_h5netcdf_open(settings, target)["driver_kwds"]}
    except NotApplicable:
        options = {}  # no chunk cache or page buffer was set
    return open_export(settings, target, engine="h5netcdf", options=options)


def zarr_export(settings: Mapping[str, Any], target: Target) -> Export:
    """``xr.open_zarr`` (the store holds no consolidated metadata) with zarr's concurrency."""
    concurrency = settings.get("request_concurrency")
    before = []
    if concurrency is not None:
        config = {"async.concurrency": int(concurrency)}
        before = ["import zarr", f"zarr.config.set({config!r})"]
    options = {"consolidated": False}
    return open_export(settings, target, engine="zarr", before=before, options=options)


def chunks_argument(settings: Mapping[str, Any], target: Target) -> str:
    """``, chunks=...`` for an open call of the object-store exports; empty without dask_chunks."""
    if settings.get("dask_chunks") is None:
        return ""
    return f", chunks={open_chunks(settings, target)!r}"
