"""Slabs thinner than a row of chunks: which writes leave chunks incomplete, and a buffer.

The runner writes a workload in slabs along the first dimension, multiples of the
chunk's (or shard's) first extent when a row of chunks fits the slab budget.  When
it does not, every slab fills part of each chunk of a row.  A producer writing in
time order then keeps the row until it is complete: HDF5 in its chunk cache
(:func:`iotune.backends.hdf5_family.write_cache`), Zarr, which has no cache and would read,
merge and store every chunk again once per slab, in a buffer (:class:`RowBuffer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from iotune.measuring.data import align_of
from iotune.model.spec import Workload


def incomplete_row(params: Mapping[str, Any], workload: Workload, slab: int) -> int | None:
    """The row length (first extent of a chunk or shard) that ``slab``-step slabs leave
    incomplete; None when slabs fill whole rows or one slab is the whole workload."""
    row = align_of(params)
    if row is None or slab % row == 0 or slab >= workload.shape[0]:
        return None
    return row


class RowBuffer:
    """Slabs held until they complete rows of ``row`` steps, then handed on whole.

    Parameters
    ----------
    row
        Length of a row along the first dimension.
    total
        The workload's length along it (the last row may be shorter).
    """

    def __init__(self, row: int, total: int) -> None:
        self._row, self._total = row, total
        self._start = 0
        self._pending: list[np.ndarray] = []

    def add(self, start: int, data: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """Take a slab; return the ``(start, block)`` pieces that are now whole rows."""
        if not self._pending:
            self._start = start
        self._pending.append(data)
        end = self._start + sum(p.shape[0] for p in self._pending)
        boundary = self._total if end >= self._total else (end // self._row) * self._row
        if boundary <= self._start:
            return []
        held = np.concatenate(self._pending) if len(self._pending) > 1 else self._pending[0]
        split = boundary - self._start
        whole, rest = held[:split], held[split:]
        done = [(self._start, whole)]
        self._start, self._pending = boundary, [rest] if rest.shape[0] else []
        return done

    def rest(self) -> list[tuple[int, np.ndarray]]:
        """What is still held (a run that stopped early), as one piece."""
        if not self._pending:
            return []
        held = np.concatenate(self._pending)
        self._pending = []
        return [(self._start, held)]
