"""The blocks a conversion writes: along the slowest-varying dimension, within the memory limit.

A region is ``[start, stop)`` of the first dimension of the converted variables.  Its
length is a multiple of the target's chunk along that dimension (no chunk is written
by two regions unless the dimension ends) and holds, for every variable written by
region, the source block and the target block at once within ``max_mem``.
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
    """Rows ``start`` to ``stop`` (excluded) of the region dimension, number ``index``."""

    index: int
    start: int
    stop: int


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


def sample(regions: Sequence[Region], count: int = 3) -> list[Region]:
    """The first, the last and evenly spread regions in between, ``count`` at most."""
    if len(regions) <= count:
        return list(regions)
    step = (len(regions) - 1) / (count - 1)
    return [regions[round(i * step)] for i in range(count)]
