"""What the two HDF5-based backends (netCDF4 and h5py) resolve and open alike.

Both store one chunked or contiguous dataset through an HDF5 library, so the
rules for what applies are the same: compression needs chunks, a chunk cache
means nothing without them, and ``nprocs > 1`` needs a parallel build.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from iotune.backends.h5py.knobs import H5pyKnobs
from iotune.backends.knobs import XARRAY_KNOBS
from iotune.backends.slab_rows import incomplete_row
from iotune.backends.xarray_open import VARIABLE
from iotune.core.errors import NotApplicable
from iotune.core.units import chunk_label, parse_chunk_label
from iotune.model import codecs
from iotune.model.spec import Workload

#: what netCDF-4 writes in a dimension scale that holds no coordinate values (h5netcdf
#: and netCDF-C read such a scale as a dimension, not as a variable)
NETCDF_DIMENSION = "This is a netCDF dimension but not a netCDF variable."


def resolve_layout(
    params: Mapping[str, Any], parallel_support: Callable[[], tuple[bool, str]]
) -> tuple[codecs.Codec, dict[str, Any], list[str]]:
    """The codec, the effective parameters and the notes of an HDF5 dataset's layout.

    Parameters
    ----------
    params
        The trial's parameters (``chunks``, ``codec``, ``level``, ``shuffle``,
        ``chunk_cache``, ``nprocs``; any may be missing).
    parallel_support
        The backend's ``parallel_support``; asked only when ``nprocs > 1``.

    Raises
    ------
    NotApplicable
        For parallel trials without a parallel build, and for compression on
        contiguous storage.  ``nprocs`` itself is the backend's to resolve.
    """
    # nprocs 1 is these backends' serial trial
    if params.get("nprocs", 1) > 1:
        parallel, why = parallel_support()
        if not parallel:
            raise NotApplicable(f"nprocs > 1: {why}")
    chunks = chunk_label(params.get("chunks", "auto"))
    codec, notes = codecs.resolve_params(params)
    if codec.name != "none" and chunks == "contiguous":
        raise NotApplicable("compression needs chunked storage; 'contiguous' has none")
    cache = params.get("chunk_cache")
    if cache is not None and chunks == "contiguous":
        notes.append("chunk_cache does not apply to contiguous storage")
        cache = None
    effective = {
        "chunks": chunks,
        "codec": codec.name,
        "level": codec.level,
        "shuffle": codec.shuffle,
        "chunk_cache": cache,
    }
    return codec, effective, notes


_H5PY = H5pyKnobs.names()
#: HDF5 file and dataset properties beyond the layout: h5py's knobs from alignment on
FILE_KNOBS = _H5PY[_H5PY.index("alignment") : _H5PY.index("cache_slots")]
#: chunk cache details that mean nothing without chunks: h5py's last knobs but xarray's
CACHE_KNOBS = tuple(k for k in _H5PY[_H5PY.index("cache_slots") :] if k not in XARRAY_KNOBS)


def resolve_file(
    params: Mapping[str, Any], chunks: str, supported: tuple[str, ...], *, library: str = "h5py"
) -> tuple[dict[str, Any], list[str]]:
    """The effective file-level knobs of an HDF5 trial, and notes on those that do not apply.

    Only knobs the trial names appear, so trials without them keep their ids.
    ``supported`` are the knobs the backend's library can set; any other one
    raises :class:`NotApplicable` with the reason.
    """
    effective: dict[str, Any] = {}
    notes: list[str] = []
    for name in (*FILE_KNOBS, *CACHE_KNOBS):
        if name not in params or params[name] is None:
            continue
        if name not in supported:
            raise NotApplicable(f"{name}: {library} cannot set it")
        if name in CACHE_KNOBS and chunks == "contiguous":
            notes.append(f"{name} does not apply to contiguous storage")
            effective[name] = None
            continue
        effective[name] = params[name]
    if "alignment_threshold" in effective and not effective.get("alignment"):
        raise NotApplicable("alignment_threshold needs an alignment interval")
    page, buffer = effective.get("page_size"), effective.get("page_buffer")
    if page and effective.get("alignment"):
        # measured: HDF5 places raw data page by page and ignores H5Pset_alignment there
        raise NotApplicable("alignment: a paged file (page_size) aligns to its pages instead")
    if buffer and not page:
        raise NotApplicable("page_buffer needs page_size (HDF5 buffers pages of a paged file)")
    if buffer and page and (buffer < page or buffer % page):
        raise NotApplicable(
            f"page_buffer {buffer} bytes is not a multiple of page_size {page} bytes"
        )
    return effective, notes


def storage_offsets(dset: Any) -> list[tuple[int, int]]:
    """``(file offset, bytes)`` of every stored chunk of an h5py dataset (or its one block)."""
    dsid = dset.id
    if dset.chunks is None:
        offset = dsid.get_offset()
        return [] if offset is None else [(offset, dsid.get_storage_size())]
    infos = (dsid.get_chunk_info(i) for i in range(dsid.get_num_chunks()))
    return [(info.byte_offset, info.size) for info in infos]


def check_alignment(dset: Any, threshold: int, interval: int) -> int:
    """Raise VerificationError unless every block of at least ``threshold`` bytes is aligned.

    Returns how many blocks were checked.
    """
    from iotune.core.errors import VerificationError

    blocks = [(o, n) for o, n in storage_offsets(dset) if n >= threshold]
    wrong = [o for o, _ in blocks if o % interval]
    if wrong:
        raise VerificationError(
            f"HDF5 did not align {len(wrong)} of {len(blocks)} chunks to {interval} bytes "
            f"(first at offset {wrong[0]}; early allocation places chunks as one block)"
        )
    return len(blocks)


#: h5py's names of the dataset properties, by the values a spec uses
FILL_TIMES = {"ifset": "FILL_TIME_IFSET", "alloc": "FILL_TIME_ALLOC", "never": "FILL_TIME_NEVER"}
ALLOC_TIMES = {
    "default": "ALLOC_TIME_DEFAULT",
    "early": "ALLOC_TIME_EARLY",
    "incr": "ALLOC_TIME_INCR",
    "late": "ALLOC_TIME_LATE",
}


def dataset_properties(dset: Any) -> dict[str, Any]:
    """Fill time and allocation time as the file stores them, in the spec's words."""
    from h5py import h5d

    dcpl = dset.id.get_create_plist()
    fill = {getattr(h5d, v): k for k, v in FILL_TIMES.items()}[dcpl.get_fill_time()]
    alloc = {getattr(h5d, v): k for k, v in ALLOC_TIMES.items()}[dcpl.get_alloc_time()]
    return {"fill_time": fill, "alloc_time": alloc}


def file_space(file: Any) -> dict[str, Any]:
    """The file-space strategy and page size an open h5py file was created with."""
    from h5py import h5f

    fcpl = file.id.get_create_plist()
    strategy = fcpl.get_file_space_strategy()[0]
    names = {
        getattr(h5f, f"FSPACE_STRATEGY_{n.upper()}"): n
        for n in ("fsm_aggr", "page", "aggr", "none")
    }
    return {
        "file_space_strategy": names.get(strategy, str(strategy)),
        "file_space_page_size": int(fcpl.get_file_space_page_size()),
    }


def cache_kwargs(params: Mapping[str, Any], workload: Workload) -> dict[str, Any]:
    """``rdcc_*`` keywords of ``h5py.File``.

    Without ``cache_slots`` the slot count follows the HDF5 guide's advice: a
    prime about 100 times the number of chunks the cache holds.
    """
    size, slots, w0 = (params.get(k) for k in ("chunk_cache", "cache_slots", "cache_preemption"))
    if size is None and slots is None and w0 is None:
        return {}
    w0 = H5pyKnobs.default("cache_preemption") if w0 is None else w0
    kwargs: dict[str, Any] = {"rdcc_w0": w0}
    if size is not None:
        kwargs["rdcc_nbytes"] = size
    if slots is None and size is not None:
        chunks = parse_chunk_label(params["chunks"])
        chunk_bytes = workload.itemsize * math.prod(chunks) if isinstance(chunks, tuple) else 2**16
        slots = _prime_at_least(max(521, 100 * size // chunk_bytes))
    if slots is not None:
        kwargs["rdcc_nslots"] = slots
    return kwargs


@dataclass(frozen=True)
class WriteCache:
    """The chunk cache a writer in slab order needs: every chunk a slab leaves incomplete.

    The runner writes slabs along the first dimension (``slab`` steps each).  When a
    chunk is longer than a slab, each slab fills part of every chunk of a row, and a
    cache that cannot hold the whole row evicts them half-written: HDF5 then filters
    and writes each chunk, and reads and unfilters it again, once per slab (measured:
    64 steps of 1024x1024 float32 into 64x16x16 zlib chunks in 8-step slabs took 18 s
    with netCDF-C's default 64 MiB cache, 25 s with 200 MiB, 2.8 s with the 256 MiB
    row, and 3.3 s written whole chunk by chunk).  A producer writing in time order
    sizes its cache so; the trial does the same unless ``chunk_cache`` is swept.
    """

    nbytes: int
    chunks: int


def write_cache(params: Mapping[str, Any], workload: Workload, slab: int) -> WriteCache | None:
    """The :class:`WriteCache` of a write in ``slab``-step slabs; None when none is needed.

    None when the trial sets ``chunk_cache`` (the user's cache), the layout is not a
    chunk grid (contiguous, or chosen by the library), or slabs fill whole chunks.  A
    slab that does not divide the chunk's length straddles two rows: both are held.
    """
    if params.get("chunk_cache") is not None:
        return None
    chunks = parse_chunk_label(params.get("chunks", "auto"))
    if not isinstance(chunks, tuple) or incomplete_row(params, workload, slab) is None:
        return None
    row = math.prod(-(-n // c) for n, c in zip(workload.shape[1:], chunks[1:], strict=True))
    held = row * (1 if chunks[0] % slab == 0 else 2)
    return WriteCache(nbytes=held * math.prod(chunks) * workload.itemsize, chunks=held)


def _prime_at_least(n: int) -> int:
    def prime(k: int) -> bool:
        return k > 1 and all(k % d for d in range(2, int(k**0.5) + 1))

    while not prime(n):
        n += 1
    return n


def file_kwargs(params: Mapping[str, Any], workload: Workload, *, create: bool) -> dict[str, Any]:
    """Keywords of ``h5py.File`` for the trial's file-level knobs and chunk cache."""
    kwargs = cache_kwargs(params, workload)
    if params.get("alignment"):
        kwargs["alignment_interval"] = params["alignment"]
        kwargs["alignment_threshold"] = H5pyKnobs.of(params).alignment_threshold
    if params.get("meta_block_size"):
        kwargs["meta_block_size"] = params["meta_block_size"]
    if params.get("libver"):
        kwargs["libver"] = params["libver"]
    if params.get("page_buffer"):
        kwargs["page_buf_size"] = params["page_buffer"]
    if create and params.get("page_size"):
        kwargs |= {"fs_strategy": "page", "fs_page_size": params["page_size"]}
    return kwargs


#: HDF5 access properties h5netcdf hands to h5py.File when xarray opens a file
READ_SIDE = ("rdcc_nbytes", "rdcc_nslots", "rdcc_w0", "page_buf_size")


def h5netcdf_options(params: Mapping[str, Any], dtype: Callable[[], str]) -> dict[str, Any]:
    """``xr.open_dataset`` keywords reading a trial's HDF5 file as measured: h5netcdf, cache.

    ``dtype`` (the stored array's, e.g. ``int16``) is asked only when the chunk
    cache's slot count depends on the item size, as the h5py reader's does.
    """
    needs_dtype = params.get("chunk_cache") is not None and params.get("cache_slots") is None
    workload = Workload(dims=(), shape=(), dtype=dtype() if needs_dtype else "int16")
    found = file_kwargs(params, workload, create=False)
    driver = {k: v for k, v in found.items() if k in READ_SIDE}
    return {"engine": "h5netcdf"} | ({"driver_kwds": driver} if driver else {})


def attach_dimensions(file: Any, dset: Any, workload: Workload) -> None:
    """Name the dataset's dimensions as netCDF-4 does, so xarray opens it with the workload's.

    Each dimension is an HDF5 dimension scale: a dataset of the dimension's
    length that is never written, so HDF5 allocates it no storage (a parallel
    file allocates it early, a few bytes per step) and the measured I/O is the
    array's.
    """
    for axis, (dim, size) in enumerate(zip(workload.dims, workload.shape, strict=True)):
        scale = file.create_dataset(dim, shape=(size,), dtype="f4")
        scale.make_scale(f"{NETCDF_DIMENSION}{size:10d}")
        dset.dims[axis].attach_scale(scale)


def stored_dtype(source: Any, workload: Workload | None) -> str:
    """The dtype of the stored dataset: the workload's, else read from ``source`` (path or file)."""
    if workload is not None:
        return workload.dtype
    import h5py

    with h5py.File(source, "r") as fh:
        name = str(fh[VARIABLE].dtype)
    if hasattr(source, "seek"):
        source.seek(0)
    return name
