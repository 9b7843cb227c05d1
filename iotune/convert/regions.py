"""The blocks a conversion writes: along the slowest-varying dimensions, within the memory limit.

A region is ``[start, stop)`` of the first dimension of the converted variables and,
when one row of target chunks (one chunk length along the first dimension, every
other dimension whole) does not fit the memory limit, ``[lo, hi)`` of the second
dimension too (:func:`plan_blocks`): a hyper-rectangle of whole target chunks (whole
shards for Zarr).  Its lengths are multiples of the target's chunk (no chunk is
written by two regions unless the dimension ends) and it holds, for every variable
written by region, the source block and the target block at once within ``max_mem``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iotune.core.errors import UsageError
from iotune.core.units import format_size

#: copies of a region held at once: the block read, and the block being written
#: (verification holds the source and the target block)
COPIES = 2


@dataclass(frozen=True)
class Region:
    """Rows ``start`` to ``stop`` (excluded) of the region dimension, number ``index``.

    ``inner`` bounds the following dimensions, ``((lo, hi),)`` for the second; empty
    when the region takes them whole.
    """

    index: int
    start: int
    stop: int
    inner: tuple[tuple[int, int], ...] = ()

    @property
    def bounds(self) -> tuple[tuple[int, int], ...]:
        """``[start, stop)`` per bounded dimension, the first one first."""
        return ((self.start, self.stop), *self.inner)

    def label(self) -> str:
        """``rows 0-16`` or ``rows 0-16 x 32-64``, for messages."""
        return "rows " + " x ".join(f"{a}-{b}" for a, b in self.bounds)


def plan_regions(length: int, *, row_bytes: int, chunk: int, max_mem: int) -> list[Region]:
    """Cut ``length`` rows of ``row_bytes`` each into regions that fit ``max_mem``.

    Parameters
    ----------
    length
        Length of the region dimension.
    row_bytes
        Bytes of one row (index along the region dimension) over all variables written.
    chunk
        The target's chunk length along the region dimension (1 for contiguous).
    max_mem
        Memory the conversion may use.

    Raises
    ------
    UsageError
        One chunk's rows do not fit ``max_mem``.
    """
    chunk = max(1, min(chunk, length or 1))
    need = COPIES * row_bytes * chunk
    if need > max_mem:
        raise UsageError(
            f"--max-mem {format_size(max_mem)}: one row of target chunks needs "
            f"{format_size(need)}; raise --max-mem or choose smaller chunks along the "
            "first dimension"
        )
    rows = max(chunk, (max_mem // (COPIES * max(row_bytes, 1))) // chunk * chunk)
    return [
        Region(i, start, min(start + rows, length))
        for i, start in enumerate(range(0, length, rows))
    ]


def plan_blocks(
    lengths: tuple[int, int],
    *,
    cell_bytes: int,
    rest_bytes: int,
    chunks: tuple[int, int],
    max_mem: int,
) -> list[Region]:
    """Cut the first two dimensions into blocks of whole chunks that fit ``max_mem``.

    A block is one chunk long along the first dimension (the source is read in slabs
    as long along the second as memory allows, which keeps reads of map-chunked
    sources contiguous) and as many whole chunks along the second as fit.

    Parameters
    ----------
    lengths
        Lengths of the first and second dimensions.
    cell_bytes
        Bytes of one (first, second) index pair over the variables split along both.
    rest_bytes
        Bytes of one row of the variables that have the first dimension only (copied
        whole with each block of the first column).
    chunks
        The target's chunk (or shard) lengths along the two dimensions.
    max_mem
        Memory the blocks may use.

    Raises
    ------
    UsageError
        One column of chunks (one chunk along each of the two dimensions) does not fit.
    """
    (n0, n1), (c0, c1) = lengths, chunks
    c0, c1 = max(1, min(c0, n0 or 1)), max(1, min(c1, n1 or 1))
    need = COPIES * (cell_bytes * c0 * c1 + rest_bytes * c0)
    if need > max_mem:
        raise UsageError(
            f"--max-mem {format_size(max_mem)}: one chunk along the first two dimensions "
            f"with the others whole needs {format_size(need)}; raise --max-mem or choose "
            "smaller chunks"
        )
    room = max_mem // COPIES - rest_bytes * c0
    cols = max(c1, (room // max(cell_bytes * c0, 1)) // c1 * c1)
    blocks = [
        (start, min(start + c0, n0), lo, min(lo + cols, n1))
        for start in range(0, n0, c0)
        for lo in range(0, n1, cols)
    ]
    return [Region(i, a, b, ((lo, hi),)) for i, (a, b, lo, hi) in enumerate(blocks)]


def sample(regions: Sequence[Region], count: int = 3) -> list[Region]:
    """The first, the last and evenly spread regions in between, ``count`` at most."""
    if len(regions) <= count:
        return list(regions)
    step = (len(regions) - 1) / (count - 1)
    return [regions[round(i * step)] for i in range(count)]
