"""Chunk shapes from published rules of thumb: Rew's balanced chunking and the cloud rule.

Pure arithmetic on a shape and an item size; the library defaults, dask's
``auto`` and a source file's layout, which need their libraries, are in
:mod:`iotune.runner.layouts`.
"""

from __future__ import annotations

import math

from iotune.core.errors import NotApplicable

MiB = 1024 * 1024
#: the chunk size Rew's algorithm aims at below (his script defaults to one 4 KiB disk
#: block; 1 MiB is HDF5's and netCDF-C's default chunk cache, so one chunk fits it)
BALANCED_BYTES = 1 * MiB
#: the cloud rule's band: chunks of 1 to 4 MiB uncompressed
CLOUD_LOW, CLOUD_HIGH = 1 * MiB, 4 * MiB


def balanced_chunks(
    shape: tuple[int, ...], itemsize: int, *, chunk_bytes: int = BALANCED_BYTES
) -> tuple[int, ...]:
    """Rew's balanced chunk shape for a 3-D ``(time, y, x)`` variable.

    Russ Rew's ``chunk_shape_3D`` (Unidata, "Chunking Data: Choosing Shapes", 2013,
    https://www.unidata.ucar.edu/blog_content/data/2013/chunk_shape_3D.py), reimplemented
    step for step: a chunk shape such that reading a time series ``var[:, y, x]``
    and reading a map ``var[t, :, :]`` touch about the same number of chunks, each
    chunk holding at most ``chunk_bytes`` uncompressed.  The ideal number of chunks
    ``N = size / chunk values`` is split as ``N**0.5`` along time and ``N**0.25``
    along each spatial axis; the floor of that shape is then grown by one along the
    subset of axes (all 8 tried) that comes closest to ``chunk_bytes`` without
    exceeding it.  These are the two reads iotune's ``timeseries`` and ``spatial``
    patterns make.  The one addition: a length is clipped to its dimension (the
    script may return a chunk longer than a short dimension, which iotune refuses).

    Parameters
    ----------
    shape
        The variable's three dimension lengths, time first.
    itemsize
        Bytes per value.
    chunk_bytes
        The largest chunk wanted, in bytes (:data:`BALANCED_BYTES`, 1 MiB).

    Raises
    ------
    NotApplicable
        ``shape`` is not 3-D (the algorithm is defined for three dimensions).
    """
    if len(shape) != 3:
        raise NotApplicable(f"Rew's balanced chunking is for 3-D variables; this one is {shape}")
    values = chunk_bytes / itemsize  # ideal values per chunk
    axis = (shape[0] * shape[1] * shape[2] / values) ** 0.25  # ideal chunks per spatial axis
    if shape[0] / axis**2 < 1.0:  # time shorter than its share: whole steps, more per axis
        floor = [1.0]
        axis = axis / math.sqrt(shape[0] / axis**2)
    else:
        floor = [float(shape[0] // axis**2)]
    grow = 1.0  # spatial axes shorter than their share make the others longer
    for n in shape[1:]:
        if n / axis < 1.0:
            grow *= axis / n
    floor += [1.0 if n / axis < 1.0 else float((grow * n) // axis) for n in shape[1:]]
    best, best_bytes = floor, 0.0
    for bits in range(8):  # add one along each subset of the axes
        candidate = [c + ((bits >> (2 - i)) & 1) for i, c in enumerate(floor)]
        nbytes = itemsize * math.prod(candidate)
        if best_bytes < nbytes <= chunk_bytes:
            best, best_bytes = candidate, nbytes
    return tuple(max(1, min(int(c), n)) for c, n in zip(best, shape, strict=True))


def cloud_chunks(
    shape: tuple[int, ...], itemsize: int, *, high: int = CLOUD_HIGH
) -> tuple[int, ...]:
    """The common cloud rule: the largest chunk of at most 4 MiB with the array's proportions.

    Object stores charge a request per chunk and need a few MiB per request to
    reach their throughput, so the guidance for Zarr and cloud-optimised
    netCDF/HDF5 is chunks of about 1 to a few MiB uncompressed (zarr-python's
    tutorial, "Chunk optimizations": at least 1 MB; Pangeo's "Choosing good chunk
    sizes" and the cloud-native geospatial guide: 1 to 4 MiB per object read).
    The rule applied: scale every dimension by one factor ``s`` (the shape's
    proportions kept, lengths rounded down, at least 1) and take the largest
    ``s`` whose chunk holds at most ``high`` bytes (4 MiB).  An array of at most
    ``high`` bytes is one chunk.  A chunk can fall below :data:`CLOUD_LOW` (1 MiB) only when
    rounding leaves no shape in the band; the band's floor is then not met.
    """
    whole = itemsize * math.prod(shape)
    if whole <= high:
        return tuple(shape)

    def scaled(s: float) -> tuple[int, ...]:
        return tuple(max(1, min(n, int(n * s))) for n in shape)

    lo, hi = 0.0, 1.0  # bytes(scaled(s)) grows with s: bisect for the largest s that fits
    for _ in range(60):
        mid = (lo + hi) / 2
        if itemsize * math.prod(scaled(mid)) <= high:
            lo = mid
        else:
            hi = mid
    chunks = scaled(lo)
    if itemsize * math.prod(chunks) > high:  # even one value per dimension is too big
        chunks = tuple(1 for _ in shape)
    return chunks
