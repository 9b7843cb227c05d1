"""Read patterns as lists of selections, independent of any format.

``full`` reads everything in slabs; ``spatial`` reads a window of the
non-leading dimensions at a few steps of the leading one (maps at a few
times); ``timeseries`` reads every step at a few points (pixel histories);
``random`` reads many small boxes at random places (IOPS-like, by default
one step x 16 x 16 values).
Positions come from the workload seed, so every trial of a sweep reads the
same places.
"""

from __future__ import annotations

import numpy as np

from iotune.measuring.data import SLAB_BUDGET, slab_length
from iotune.model.spec import ReadSpec, Workload

SPATIAL_DEFAULT = {"first": 4, "fraction": 0.5}


#: what a reader is asked for: an index per dimension
Selection = tuple[slice | int, ...]


def selections(
    pattern: str,
    workload: Workload,
    read: ReadSpec,
    *,
    align: int | None = None,
    budget: int = SLAB_BUDGET,
) -> list[Selection]:
    """Return the selections a read pattern makes, in order.

    Parameters
    ----------
    pattern
        ``full``, ``spatial`` or ``timeseries``.
    workload
        The array being read.
    read
        Sizes of the patterns.
    align
        Chunk extent along the first dimension, so full reads follow chunks.
    budget
        Largest selection of a full read, in bytes.
    """
    if pattern == "full":
        step = slab_length(workload, align=align, budget=budget)
        n = workload.shape[0]
        return [(slice(s, min(s + step, n)),) for s in range(0, n, step)]
    rng = np.random.default_rng([workload.seed, 0xACCE55])
    if pattern == "spatial":
        return _spatial(workload, dict(read.spatial), rng)
    if pattern == "timeseries":
        points = [
            tuple(int(rng.integers(0, n)) for n in workload.shape[1:])
            for _ in range(read.timeseries_pixels)
        ]
        return [(slice(None), *point) for point in points]
    if pattern == "random":
        return _random(workload, dict(read.random_shape), read.random_ops, rng)
    raise ValueError(f"unknown pattern {pattern!r}")


def _random(workload: Workload, box: dict, ops: int, rng: np.random.Generator) -> list[Selection]:
    sizes = [
        box.get(d, 1 if i == 0 else min(16, n))
        for i, (d, n) in enumerate(zip(workload.dims, workload.shape, strict=True))
    ]
    out: list[Selection] = []
    for _ in range(ops):
        origin = [
            int(rng.integers(0, n - s + 1)) for n, s in zip(workload.shape, sizes, strict=True)
        ]
        out.append(tuple(slice(o, o + s) for o, s in zip(origin, sizes, strict=True)))
    return out


def _extent(size: float | int | None, full: int, default: float) -> int:
    if size is None:
        size = default
    if isinstance(size, float):
        return max(1, round(size * full))
    return int(size)


def _spatial(workload: Workload, sizes: dict, rng: np.random.Generator) -> list[Selection]:
    first, rest = workload.dims[0], workload.dims[1:]
    n_steps: int = _extent(sizes.get(first), workload.shape[0], 0)
    n_steps = n_steps if first in sizes else min(int(SPATIAL_DEFAULT["first"]), workload.shape[0])
    window = []
    for dim, full in zip(rest, workload.shape[1:], strict=True):
        width = _extent(sizes.get(dim), full, SPATIAL_DEFAULT["fraction"])
        origin = int(rng.integers(0, full - width + 1))
        window.append(slice(origin, origin + width))
    steps = np.linspace(0, workload.shape[0] - 1, n_steps).round().astype(int)
    return [(int(t), *window) for t in steps]


def delivered_bytes(selection: Selection, workload: Workload) -> int:
    """Bytes a selection returns to the caller."""
    n = workload.itemsize
    for sel, full in zip(selection, workload.shape, strict=False):
        if isinstance(sel, slice):
            n *= len(range(*sel.indices(full)))
    for full in workload.shape[len(selection) :]:
        n *= full
    return n
