"""Which regions a conversion writes and which part of each variable a region holds.

A region is a block of the first dimension of the converted variables when one row of
target chunks (one chunk along it, the other dimensions whole) fits the memory limit
(:func:`iotune.convert.regions.plan_regions`), else a block of the first two dimensions
(:func:`iotune.convert.regions.plan_blocks`).  In the second case the variables whose
second dimension is the converted variables' second one are cut along it too; the
other variables of the region dimension (the time axis, its bounds) are written whole
along their other dimensions with the blocks of the first column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iotune.convert.regions import COPIES, Region, plan_blocks, plan_regions

if TYPE_CHECKING:
    import xarray as xr


@dataclass(frozen=True)
class Blocks:
    """The regions and how they cut each variable written by region."""

    regions: list[Region]
    region_dim: str
    #: the second dimension cut by the regions, None when they take it whole
    second_dim: str | None
    #: bytes of one row of the region dimension over the variables written by region
    row_bytes: int
    #: bytes of one (first, second) index pair of the variables cut along both
    cell_bytes: int = 0
    #: the names of the variables cut along both dimensions
    split: frozenset[str] = frozenset()
    #: the length of the second dimension (0 when not cut)
    second_length: int = 0

    def key(self, region: Region, name: str, dims: Sequence[str]) -> dict[str, slice] | None:
        """The part of variable ``name`` (of ``dims``) region writes; None for none of it."""
        rows = {self.region_dim: slice(region.start, region.stop)}
        if not region.inner or self.second_dim is None:
            return rows
        lo, hi = region.inner[0]
        if name in self.split:
            rows[self.second_dim] = slice(lo, hi)
            return rows
        return rows if lo == 0 else None  # written once, with the first column

    def bytes_of(self, region: Region) -> int:
        """The bytes one region writes."""
        length = region.stop - region.start
        if not region.inner:
            return self.row_bytes * length
        lo, hi = region.inner[0]
        rest = self.row_bytes - self.cell_bytes * self.second_length if lo == 0 else 0
        return length * (self.cell_bytes * (hi - lo) + rest)

    def describe(self) -> list[list[int]]:
        """The regions for the journal's header: ``[start, stop]``, ``[a, b, lo, hi]`` in 2-D."""
        return [[v for pair in r.bounds for v in pair] for r in self.regions]


def index_of(dims: Sequence[Any], key: dict[str, slice]) -> tuple[slice, ...]:
    """The positional index of ``key`` (slices by dimension name) for ``dims``."""
    return tuple(key.get(str(d), slice(None)) for d in dims)


def plan(
    ds: xr.Dataset,
    converted: Sequence[str],
    by_region: set[str],
    *,
    chunks: tuple[int, ...],
    max_mem: int,
) -> Blocks:
    """The regions of a conversion within ``max_mem`` (bytes of data held at once).

    ``chunks`` are the target's chunk (or shard) lengths of the first converted
    variable; regions are whole multiples of them.
    """
    first = ds[converted[0]]
    region_dim = str(first.dims[0])
    row_bytes = sum(ds[n].dtype.itemsize * math.prod(ds[n].shape[1:]) for n in by_region)
    length = int(ds.sizes[region_dim])
    chunk = chunks[0] if chunks else 1
    if COPIES * row_bytes * min(chunk, length or 1) <= max_mem or first.ndim < 2:
        regions = plan_regions(length, row_bytes=row_bytes, chunk=chunk, max_mem=max_mem)
        return Blocks(regions, region_dim, None, row_bytes)
    second_dim = str(first.dims[1])
    split = frozenset(n for n in by_region if ds[n].ndim >= 2 and str(ds[n].dims[1]) == second_dim)
    cell_bytes = sum(ds[n].dtype.itemsize * math.prod(ds[n].shape[2:]) for n in split)
    rest = sum(ds[n].dtype.itemsize * math.prod(ds[n].shape[1:]) for n in by_region - split)
    second_length = int(ds.sizes[second_dim])
    regions = plan_blocks(
        (length, second_length),
        cell_bytes=cell_bytes,
        rest_bytes=rest,
        chunks=(chunk, chunks[1] if len(chunks) > 1 else 1),
        max_mem=max_mem,
    )
    return Blocks(regions, region_dim, second_dim, row_bytes, cell_bytes, split, second_length)
