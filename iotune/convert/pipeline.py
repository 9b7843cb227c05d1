"""The chunk pipeline: a netCDF4/HDF5 target's chunks compressed on every core, one writer.

An HDF5 file has one writer, and netCDF-C and HDF5 compress inside it, on one core.
Here the target's writer creates the file as always (dimensions, variables, netCDF
metadata, filters, fill values), then for each region the source block is read, its
whole target chunks are encoded by a thread pool (zlib and numpy's copies release the
GIL; :mod:`iotune.backends.hdf5_chunks` produces HDF5's stored bytes) and the calling
thread writes them in order with h5py's ``write_direct_chunk``.  Blocks not of whole
chunks (the small variables of the region dimension with their own chunks) are
written through h5py, which compresses them as the library does.  Each region is
flushed before its journal line, as in the serial copier, so ``--resume`` after a
kill -9 writes only the regions the journal lacks.

Memory: a region's source block and its encoded chunks are held at once, which is
the two copies the region plan allows (:data:`iotune.convert.regions.COPIES`); a
deflate chunk is never stored longer than its input, so the encoded chunks of a
region take at most its bytes.  The reads stay serial: netCDF-C and HDF5 serialise
every call on one file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from iotune.backends.hdf5_chunks import ChunkCodec, chunk_codec
from iotune.backends.target import TargetWriter
from iotune.convert.blocks import index_of
from iotune.convert.journal import RegionJournal
from iotune.convert.regions import Region


class RegionJob(Protocol):
    """What the pipeline reads of a conversion (:class:`iotune.convert.convert.Job`)."""

    source: Any
    regions: list[Region]
    by_region: set[str]
    converted: list[str]

    def key(self, region: Region, name: str) -> dict[str, slice] | None: ...

    def bytes_of(self, region: Region) -> int: ...


def threads() -> int:
    """The compressing threads: one per core this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def write_chunks(
    job: RegionJob,
    target: TargetWriter,
    journal: RegionJournal,
    *,
    on_bytes: Callable[[int], None] | None = None,
    delay: float = 0.0,
) -> None:
    """Write the regions the journal lacks: chunks encoded in parallel, one writer.

    Raises
    ------
    ValueError
        A converted variable's filters are not encoded here (the engine's choice
        should have ruled it out: :func:`iotune.convert.engines.choose`).
    """
    with target.chunk_file() as h5, ThreadPoolExecutor(threads()) as pool:
        for name in job.by_region:  # a chunk written directly extends no dataset
            shape = tuple(job.source.ds[name].shape)
            if h5[name].shape != shape:
                h5[name].resize(shape)  # a netCDF record variable, created empty
        codecs = {name: chunk_codec(h5[name]) for name in job.by_region}
        for name in job.converted:
            if not isinstance(codecs[name], ChunkCodec):
                raise ValueError(f"{name}: {codecs[name]}; the chunk pipeline cannot write it")
        for region in job.regions:
            if region.index in journal.done:
                continue
            for name in sorted(job.by_region):
                key = job.key(region, name)
                if key is not None:
                    _write_block(h5[name], job.source.ds[name], key, codecs[name], pool)
            h5.flush()
            journal.written(region.index, region.start, region.stop, region.inner)
            if on_bytes is not None:
                on_bytes(job.bytes_of(region))
            if delay:
                time.sleep(delay)


def _write_block(
    dset: Any,
    var: Any,
    key: dict[str, slice],
    codec: ChunkCodec | str,
    pool: ThreadPoolExecutor,
) -> None:
    """One variable's block: as encoded whole chunks, else through h5py."""
    block = var.isel(key).values
    index = index_of(var.dims, key)
    if not isinstance(codec, ChunkCodec) or not codec.aligned(index):
        dset[index] = block
        return
    offsets: Sequence[tuple[int, ...]] = list(codec.offsets(index))

    def encode(offset: tuple[int, ...]) -> tuple[int, bytes]:
        return codec.encode(codec.chunk_of(block, index, offset))

    for offset, (mask, data) in zip(offsets, pool.map(encode, offsets), strict=True):
        dset.id.write_direct_chunk(offset, data, mask)
