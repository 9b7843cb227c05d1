"""Variables that do not start with the region dimension, copied and verified by blocks.

A static field ``orog(y, x)`` or a variable in ``(lat, time)`` order is not cut by the
regions; it is copied in blocks of its own first dimension, each small enough that
the block read and the block written fit ``--max-mem`` together.  Scalars are one
block.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from iotune.convert.regions import COPIES
from iotune.core.errors import UsageError
from iotune.core.units import format_size

if TYPE_CHECKING:
    import xarray as xr

#: rows [start, stop) of a variable's first dimension; (0, 0) for a scalar
Rows = tuple[int, int]
Writer = Callable[[str, int, int, np.ndarray], None]
Reader = Callable[[str, int | None, int | None], np.ndarray]


def plan_whole(ds: xr.Dataset, names: Iterable[str], *, max_mem: int) -> dict[str, list[Rows]]:
    """The blocks of each variable in ``names``, cut along its own first dimension.

    Raises
    ------
    UsageError
        One row of a variable (an index along its first dimension) does not fit ``max_mem``.
    """
    planned: dict[str, list[Rows]] = {}
    for name in names:
        var = ds[name]
        if var.ndim == 0:
            planned[name] = [(0, 0)]
            continue
        row = var.dtype.itemsize * math.prod(var.shape[1:])
        if COPIES * row > max_mem:
            dims = ", ".join(map(str, var.dims))
            raise UsageError(
                f"--max-mem {format_size(max_mem)}: one row of {name} ({dims}) along "
                f"{var.dims[0]} needs {format_size(COPIES * row)}; raise --max-mem"
            )
        rows = max(1, max_mem // (COPIES * max(row, 1)))
        length = var.shape[0]
        planned[name] = [(a, min(a + rows, length)) for a in range(0, length, rows)] or [(0, 0)]
    return planned


def source_rows(ds: xr.Dataset, name: str, block: Rows) -> np.ndarray:
    """The stored values of one block of a source variable."""
    var = ds[name]
    if var.ndim == 0:
        return np.asarray(var.values)
    return np.asarray(var.isel({var.dims[0]: slice(*block)}).values)


def copy_whole(ds: xr.Dataset, blocks: Mapping[str, Sequence[Rows]], write: Writer) -> None:
    """Write every block of every variable through ``write(name, start, stop, values)``."""
    for name, planned in blocks.items():
        for block in planned:
            write(name, *block, source_rows(ds, name, block))


def target_rows(read: Reader, ds: xr.Dataset, name: str, block: Rows) -> np.ndarray:
    """The same block read from the target (a scalar is read whole)."""
    if ds[name].ndim == 0:
        return np.asarray(read(name, None, None))
    return np.asarray(read(name, *block))
