"""The layouts of the ``baselines`` list, each computed by the library that defines it.

Nothing here is a copied number: netCDF-C's default chunks are read back from a
variable netCDF4-python created without ``chunksizes``, h5py's guess from a dataset
created with ``chunks=True``, zarr-python's from an array created without
``chunks``, dask's ``auto`` from ``normalize_chunks`` and a source file's chunks
and codec from the file.  Rew's balanced chunking and the cloud rule are
arithmetic (:mod:`iotune.runner.chunk_rules`).  The format libraries are imported
inside the functions that use them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iotune.core.errors import NotApplicable
from iotune.model import codecs
from iotune.model.spec import Workload
from iotune.runner.chunk_rules import balanced_chunks, cloud_chunks

Chunks = str | tuple[int, ...]


def library_chunks(backend: str, workload: Workload, codec: codecs.Codec) -> Chunks:
    """The layout the backend's format library picks when given no chunks.

    Raises
    ------
    NotApplicable
        The backend has no format library with a default chunk layout (posix, mpiio, memory).
    """
    from iotune.backends import get_backend

    return get_backend(backend).library_chunks(workload, codec)


def dask_auto_chunks(workload: Workload) -> tuple[int, ...]:
    """dask's ``auto`` chunks (``normalize_chunks("auto", ...)``): the first block per dimension.

    dask sizes them by its ``array.chunk-size`` setting (128 MiB unless configured).
    """
    import numpy as np
    from dask.array.core import normalize_chunks

    blocks = normalize_chunks("auto", workload.shape, dtype=np.dtype(workload.dtype))
    return tuple(int(b[0]) for b in blocks)


def source_layout(workload: Workload) -> tuple[Chunks, dict[str, Any]]:
    """The source file's own chunks (clipped to the workload) and codec parameters.

    Returns
    -------
    chunks, codec
        ``contiguous`` or a shape; ``{"codec": ..., "level": ..., "shuffle": ...}``.

    Raises
    ------
    NotApplicable
        Not ``field: file``, or a codec iotune cannot write.
    """
    if workload.field != "file" or workload.path is None or workload.variable is None:
        raise NotApplicable("'source' needs field: file")
    from iotune.measuring.data import source_files

    path = source_files(workload.path)[0]  # a glob's files: the first one's layout
    if path.is_dir():
        chunks, codec = _zarr_source(path, workload.variable)
    else:
        chunks, codec = _netcdf_source(path, workload.variable)
    if isinstance(chunks, tuple):
        chunks = tuple(min(c, n) for c, n in zip(chunks, workload.shape, strict=True))
    return chunks, codec


def _netcdf_source(path: Path, variable: str) -> tuple[Chunks, dict[str, Any]]:
    import netCDF4

    with netCDF4.Dataset(path, "r") as ds:
        var = ds.variables[variable]
        chunking, filters = var.chunking(), var.filters() or {}
    chunks: Chunks = (
        "contiguous" if chunking in (None, "contiguous") else tuple(int(c) for c in chunking)
    )
    return chunks, _netcdf_codec(filters)


def _netcdf_codec(filters: Mapping[str, Any]) -> dict[str, Any]:
    """iotune's codec parameters for what ``Variable.filters()`` reports."""
    level = filters.get("complevel")
    shuffle = "byte" if filters.get("shuffle") else "none"
    if filters.get("szip"):
        raise NotApplicable("the source is szip-compressed, which iotune does not write")
    blosc = filters.get("blosc")
    if blosc:
        cname = str(blosc.get("compressor", "")).removeprefix("blosc_")
        shuffled = {v[0]: k for k, v in codecs.BLOSC_SHUFFLE.items()}
        return _codec(f"blosc-{cname}", level, shuffled.get(blosc.get("shuffle"), "none"))
    for family in ("zlib", "zstd", "bzip2"):
        if filters.get(family):
            return _codec(family, level, shuffle)
    return {"codec": "none", "level": None, "shuffle": "none"}


def _zarr_source(path: Path, variable: str) -> tuple[Chunks, dict[str, Any]]:
    import zarr

    array = zarr.open_array(str(path), path=variable, mode="r")
    chunks = tuple(int(c) for c in array.chunks)
    if not array.compressors:
        return chunks, {"codec": "none", "level": None, "shuffle": "none"}
    first: Any = array.compressors[0]
    kind = type(first).__name__.lower().removesuffix("codec")
    level = getattr(first, "clevel", getattr(first, "level", None))
    if kind == "blosc":
        cname = getattr(first.cname, "value", first.cname)
        return chunks, _codec(f"blosc-{cname}", level, "none")
    if kind in ("zstd", "zlib"):
        return chunks, _codec(kind, level, "none")
    raise NotApplicable(f"the source's codec {kind!r} is not one iotune writes")


def _codec(name: str, level: Any, shuffle: str) -> dict[str, Any]:
    if name not in codecs.CODECS:
        raise NotApplicable(f"the source's codec {name!r} is not one iotune writes")
    return {"codec": name, "level": None if level is None else int(level), "shuffle": shuffle}


def layout(
    name: str, backend: str, workload: Workload, codec: codecs.Codec
) -> tuple[Chunks, dict[str, Any]]:
    """The chunks (and, for ``source``, codec parameters) of the baseline ``name``.

    Raises
    ------
    NotApplicable
        The baseline does not apply to this backend or workload (the message says why).
    """
    try:
        if name == "library":
            return library_chunks(backend, workload, codec), {}
        if name == "dask-auto":
            return dask_auto_chunks(workload), {}
        if name == "balanced":
            return balanced_chunks(workload.shape, workload.itemsize), {}
        if name == "cloud":
            return cloud_chunks(workload.shape, workload.itemsize), {}
        if name == "source":
            return source_layout(workload)
    except ImportError as err:  # the library that defines the layout is not installed
        raise NotApplicable(f"{name} needs {err.name or err}, which is not installed") from err
    raise ValueError(f"unknown baseline {name!r}")
