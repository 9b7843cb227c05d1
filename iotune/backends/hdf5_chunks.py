"""An HDF5 dataset's chunks encoded outside the library, byte for byte as HDF5 stores them.

``iotune apply``'s chunk pipeline (:mod:`iotune.convert.pipeline`) compresses the
chunks of a netCDF4 or HDF5 target on every core and hands the stored bytes to the
single writer (``write_direct_chunk``).  Only filter pipelines whose stored bytes
this module reproduces exactly are encoded here (tests/backends/test_hdf5_chunks.py
compares them with ``read_direct_chunk`` of chunks HDF5 and netCDF-C wrote):

- no filter: the chunk's bytes, an edge chunk padded to full size with the
  dataset's fill value (as the library pads it);
- HDF5's shuffle (filter 2): the bytes of each element's k-th byte together
  (``numcodecs.Shuffle(itemsize)``);
- HDF5's deflate (filter 1): a zlib stream at the filter's level (``zlib.compress``,
  ``numcodecs.Zlib``), kept even where it is longer than its input (random bits):
  HDF5 2.0 (h5py's) and 2.2 (netCDF4-python's) store it so, with a filter mask of 0.

Any other filter (zstd, bzip2, blosc, szip, fletcher32, scale-offset, n-bit) is not
encoded: :func:`chunk_codec` says why, and the caller writes through the library.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

#: HDF5's filter ids this module reproduces
DEFLATE, SHUFFLE = 1, 2


@dataclass(frozen=True)
class ChunkCodec:
    """How one dataset's chunks are stored: shape, dtype, padding, shuffle and deflate."""

    chunks: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    fill: Any
    shuffle: bool
    #: deflate's level, None without deflate
    level: int | None

    def aligned(self, index: tuple[slice, ...]) -> bool:
        """Whether ``index`` covers whole chunks (cut only where the dataset ends)."""
        for cut, chunk, length in zip(index, self.chunks, self.shape, strict=True):
            start, stop, _ = cut.indices(length)
            if start % chunk or (stop % chunk and stop != length):
                return False
        return True

    def offsets(self, index: tuple[slice, ...]) -> Iterator[tuple[int, ...]]:
        """The first element of every chunk of an :meth:`aligned` ``index``."""
        ranges = []
        for cut, chunk, length in zip(index, self.chunks, self.shape, strict=True):
            start, stop, _ = cut.indices(length)
            ranges.append(range(start, stop, chunk))
        for point in np.ndindex(*(len(r) for r in ranges)):
            yield tuple(r[i] for r, i in zip(ranges, point, strict=True))

    def encode(self, values: np.ndarray) -> tuple[int, bytes]:
        """The filter mask and the stored bytes of one chunk's ``values`` (an edge one padded)."""
        block = np.asarray(values, dtype=self.dtype)
        if block.shape != self.chunks:
            padded = np.full(self.chunks, self.fill, dtype=self.dtype)
            padded[tuple(slice(0, n) for n in block.shape)] = block
            block = padded
        raw = np.ascontiguousarray(block).tobytes()
        size = self.dtype.itemsize
        if self.shuffle and size > 1:
            raw = np.frombuffer(raw, np.uint8).reshape(-1, size).T.tobytes()
        if self.level is None:
            return 0, raw
        return 0, zlib.compress(raw, self.level)

    def chunk_of(self, block: np.ndarray, index: tuple[slice, ...], offset: tuple[int, ...]) -> Any:
        """The values of the chunk at ``offset`` within ``block`` (read at ``index``)."""
        starts = [cut.indices(n)[0] for cut, n in zip(index, self.shape, strict=True)]
        inner = tuple(
            slice(o - s, o - s + c) for o, s, c in zip(offset, starts, self.chunks, strict=True)
        )
        return block[inner]


def chunk_codec(dset: Any) -> ChunkCodec | str:
    """The :class:`ChunkCodec` of an h5py dataset, or why its chunks are not encoded here."""
    if dset.chunks is None:
        return "contiguous storage has no chunks"
    dtype = np.dtype(dset.dtype)
    if dtype.kind not in "biuf" or dtype.metadata:
        return f"dtype {dtype} is not a plain number"
    plist = dset.id.get_create_plist()
    filters = [plist.get_filter(i) for i in range(plist.get_nfilters())]
    ids = [f[0] for f in filters]
    other = [i for i in ids if i not in (DEFLATE, SHUFFLE)]
    if other:
        return f"HDF5 filter {other[0]}: its stored bytes are not reproduced outside the library"
    if ids.count(SHUFFLE) > 1 or ids.count(DEFLATE) > 1:
        return "a filter twice in the pipeline"
    if SHUFFLE in ids and DEFLATE in ids and ids.index(SHUFFLE) > ids.index(DEFLATE):
        return "shuffle after deflate"
    level = None
    if DEFLATE in ids:
        level = int(filters[ids.index(DEFLATE)][2][0])
    fill = dset.fillvalue if dset.fillvalue is not None else 0
    return ChunkCodec(
        chunks=tuple(dset.chunks),
        shape=tuple(dset.shape),
        dtype=dtype,
        fill=fill,
        shuffle=SHUFFLE in ids,
        level=level,
    )
