"""The parameter registry: every sweep parameter declared once.

A :class:`ParameterDef` says how a parameter parses from a spec, how it prints,
its units and label in results and plots, and which group of knobs it belongs
to.  The spec parser, the Dataset writer, ``ds.iotune``, plots, baselines,
recommend and the exports read it; a backend names the registered parameters
it applies in its ``parameters``.  Adding a knob is one entry here, the backend
that applies it, and its test.
"""

from __future__ import annotations

from typing import Any

from iotune.core.errors import UsageError
from iotune.model import codecs, parsers
from iotune.model.definition import GROUPS, KINDS, ParameterDef
from iotune.model.loader_parameters import LOADER_PARAMETERS
from iotune.model.repository_parameters import REPOSITORY_PARAMETERS

__all__ = ["FSSPEC_CACHES", "GROUPS", "KINDS", "PARAMETERS", "ParameterDef", "generic", "get"]

#: fsspec's file caches (``fsspec.caching``) a sweep may compare
FSSPEC_CACHES = ("none", "bytes", "readahead", "blockcache", "first", "all", "background")


def get(name: str) -> ParameterDef:
    """The registered parameter ``name``.

    Raises
    ------
    UsageError
        ``name`` is not registered; the message lists the registered names.
    """
    try:
        return PARAMETERS[name]
    except KeyError:
        raise UsageError(
            f"unknown parameter {name!r}; registered: {', '.join(PARAMETERS)}"
        ) from None


def is_bytes(name: str) -> bool:
    """Whether ``name`` is a registered byte-size parameter (``False`` for other names)."""
    found = PARAMETERS.get(name)
    return found is not None and found.is_bytes


def show(name: str, value: Any) -> str:
    """``value`` of parameter ``name`` as a spec writes it; plain text for other names."""
    found = PARAMETERS.get(name)
    return found.show(value) if found is not None else str(value)


def generic() -> tuple[str, ...]:
    """Parameters the trial runner applies whatever the backend (``concurrency``)."""
    return tuple(name for name, p in PARAMETERS.items() if p.generic)


def _declare(*defs: ParameterDef) -> dict[str, ParameterDef]:
    declared = {d.name: d for d in defs}
    if len(declared) != len(defs):  # one definition per knob: a second would replace the first
        names = [d.name for d in defs]
        raise ValueError(f"declared twice: {sorted({n for n in names if names.count(n) > 1})}")
    return declared


PARAMETERS: dict[str, ParameterDef] = _declare(
    ParameterDef("chunks", "shape", "format", "chunk shape", parsers.parse_chunks, [8, 32, 32]),
    ParameterDef("shards", "shape", "format", "shard shape", parsers.parse_shards, [8, 64, 64]),
    ParameterDef("transfer_size", "size", "format", "bytes per I/O call", parsers.positive, "1MiB"),
    ParameterDef(
        "codec",
        "enum",
        "format",
        "compression codec",
        parsers.wrap(codecs.parse_codec_name),
        "zlib",
    ),
    ParameterDef("level", "count", "format", "compression level", parsers.count(0, 22), 4),
    ParameterDef(
        "shuffle", "enum", "format", "shuffle filter", parsers.wrap(codecs.parse_shuffle), "byte"
    ),
    ParameterDef("chunk_cache", "size", "cache", "chunk cache size", parsers.size, "64MiB"),
    ParameterDef(
        "concurrency",
        "count",
        "parallel",
        "processes at once",
        parsers.count(1, 256),
        2,
        generic=True,
    ),
    # the share of the workload a trial writes (Sweep.workload_at): a grid records
    # cheap trials beside full-size ones; iotune tune climbs it as its rungs
    ParameterDef(
        "fidelity",
        "fraction",
        "workload",
        "share of the workload",
        parsers.parse_fidelity,
        0.125,
        generic=True,
    ),
    *LOADER_PARAMETERS,
    # parallel I/O (the mpiio backend; IOR's vocabulary)
    ParameterDef("nprocs", "count", "parallel", "MPI processes", parsers.count(1, 65536), 4),
    ParameterDef("bytes_per_rank", "size", "parallel", "bytes per rank", parsers.positive, "4MiB"),
    ParameterDef(
        "layout", "enum", "parallel", "file layout", parsers.one_of("shared", "fpp"), "fpp"
    ),
    ParameterDef(
        "io",
        "enum",
        "MPI",
        "MPI-IO calls",
        parsers.one_of("collective", "independent"),
        "independent",
    ),
    ParameterDef(
        "access",
        "enum",
        "parallel",
        "access pattern",
        parsers.one_of("contiguous", "strided", "block3d"),
        "strided",
    ),
    ParameterDef("hints", "name", "MPI", "MPI-IO hint set", parsers.parse_hint_set_name, "cb"),
    ParameterDef(
        "stripe_count", "count", "file system", "Lustre stripe count", parsers.count(-1, 2000), 4
    ),
    ParameterDef(
        "stripe_size",
        "size",
        "file system",
        "Lustre stripe size",
        parsers.parse_stripe_size,
        "1MiB",
    ),
    ParameterDef(
        "preallocate",
        "enum",
        "file system",
        "space allocated before the writes",
        parsers.parse_switch,
        "on",
    ),
    # POSIX file-level knobs (the posix backend)
    ParameterDef(
        "direct", "enum", "file system", "O_DIRECT (no page cache)", parsers.parse_switch, "on"
    ),
    ParameterDef(
        "fadvise",
        "enum",
        "file system",
        "posix_fadvise advice",
        parsers.one_of("none", "sequential", "random"),
        "sequential",
    ),
    ParameterDef(
        "sync",
        "enum",
        "file system",
        "how writes reach the disk",
        parsers.one_of("fsync", "fdatasync", "dsync"),
        "fdatasync",
    ),
    # HDF5 file-level knobs (h5py; netCDF4 where netCDF-C exposes them)
    ParameterDef(
        "alignment",
        "size",
        "format",
        "HDF5 alignment interval (0: none)",
        parsers.off_or_size,
        "1MiB",
    ),
    ParameterDef(
        "alignment_threshold",
        "size",
        "format",
        "HDF5 alignment threshold",
        parsers.size,
        "64KiB",
    ),
    ParameterDef(
        "meta_block_size", "size", "format", "HDF5 metadata block size", parsers.positive, "1MiB"
    ),
    ParameterDef(
        "sieve_buf_size", "size", "format", "HDF5 data sieve buffer size", parsers.positive, "1MiB"
    ),
    ParameterDef(
        "libver",
        "enum",
        "format",
        "HDF5 file format versions (lower bound)",
        parsers.one_of("earliest", "v110", "v112", "v114", "latest"),
        "latest",
    ),
    ParameterDef(
        "page_size",
        "size",
        "format",
        "HDF5 file-space page size (0: not paged)",
        parsers.page,
        "4MiB",
    ),
    ParameterDef(
        "page_buffer",
        "size",
        "cache",
        "HDF5 page buffer size (0: none)",
        parsers.off_or_size,
        "16MiB",
    ),
    ParameterDef(
        "fill_time",
        "enum",
        "format",
        "HDF5 fill time",
        parsers.one_of("ifset", "alloc", "never"),
        "never",
    ),
    ParameterDef(
        "alloc_time",
        "enum",
        "format",
        "HDF5 space allocation time",
        parsers.one_of("default", "early", "incr", "late"),
        "early",
    ),
    ParameterDef(
        "cache_slots", "count", "cache", "chunk cache hash slots", parsers.count(1, 2**24), 12421
    ),
    ParameterDef(
        "cache_preemption",
        "fraction",
        "cache",
        "chunk cache preemption (w0)",
        parsers.parse_fraction,
        0.75,
    ),
    # netCDF4
    ParameterDef("fill", "enum", "format", "netCDF fill mode", parsers.parse_switch, "off"),
    ParameterDef(
        "format",
        "enum",
        "format",
        "netCDF file format",
        parsers.one_of("NETCDF4", "NETCDF4_CLASSIC", "NETCDF3_64BIT_DATA"),
        "NETCDF4_CLASSIC",
    ),
    ParameterDef(
        "quantize",
        "name",
        "format",
        "lossy quantisation (mode:digits or bits)",
        parsers.parse_quantize,
        "bitround:10",
    ),
    # Zarr
    ParameterDef(
        "write_empty_chunks",
        "enum",
        "format",
        "store chunks equal to the fill value",
        parsers.parse_switch,
        "off",
    ),
    ParameterDef(
        "shard_index",
        "enum",
        "format",
        "shard index location",
        parsers.one_of("start", "end"),
        "start",
    ),
    # MPI-IO hints as typed parameters (merged into the trial's hint set)
    ParameterDef(
        "cb_nodes", "count", "MPI", "collective buffering aggregators", parsers.count(1, 65536), 2
    ),
    ParameterDef(
        "cb_buffer_size", "size", "MPI", "collective buffer size", parsers.positive, "16MiB"
    ),
    ParameterDef(
        "stripe_count_hint",
        "count",
        "MPI",
        "stripe count through the MPI-IO hint striping_factor",
        parsers.count(1, 2000),
        4,
    ),
    ParameterDef(
        "stripe_size_hint",
        "size",
        "MPI",
        "stripe size through the MPI-IO hint striping_unit",
        parsers.parse_stripe_size,
        "1MiB",
    ),
    # object storage (the zarr-object, hdf5-object and object backends)
    ParameterDef(
        "client",
        "enum",
        "object store",
        "object-store client library",
        parsers.one_of("obstore", "fsspec"),
        "obstore",
    ),
    ParameterDef(
        "request_concurrency",
        "count",
        "parallel",
        "requests in flight (zarr async.concurrency, GET and upload concurrency)",
        parsers.count(1, 1024),
        16,
    ),
    ParameterDef(
        "part_size",
        "size",
        "object store",
        "multipart part size (uploads) and ranged-GET size (full reads)",
        parsers.parse_part_size,
        "16MiB",
    ),
    ParameterDef(
        "coalesce",
        "size",
        "object store",
        "largest gap between byte ranges merged into one GET",
        parsers.size,
        "1MiB",
    ),
    ParameterDef(
        "cache_type",
        "enum",
        "object store",
        "fsspec file cache type",
        parsers.one_of(*FSSPEC_CACHES),
        "blockcache",
    ),
    ParameterDef(
        "read_block_size",
        "size",
        "object store",
        "fsspec file block size: bytes per GET of a read",
        parsers.positive,
        "4MiB",
    ),
    ParameterDef(
        "consolidated",
        "enum",
        "object store",
        "Zarr consolidated metadata",
        parsers.parse_switch,
        "on",
    ),
    # virtual Zarr references to the source (backends/virtual): their form, chunks inlined
    ParameterDef("reference", "enum", "format", "reference form", parsers.reference, "icechunk"),
    ParameterDef("inline_threshold", "size", "format", "inlined below", parsers.size, "4KiB"),
    *REPOSITORY_PARAMETERS,
    # the source opened as it is (backends/inplace): the xarray engine that reads it
    ParameterDef(
        "engine", "enum", "format", "xarray engine of the source", parsers.engine, "h5netcdf"
    ),
    # reads through xarray (the formats with SlabBackend.open_dataset)
    ParameterDef(
        "dask_chunks",
        "name",
        "parallel",
        "dask chunks of xarray's open_dataset (none, auto, storage or dim=n)",
        parsers.parse_dask_chunks,
        "time=4",
    ),
    ParameterDef(
        "dask_threads",
        "count",
        "parallel",
        "threads of the dask scheduler reading a trial",
        parsers.count(1, 1024),
        2,
    ),
)
