"""The samples of the ``batches`` pattern: where each lies, and the batches a repeat reads.

The array is tiled by the sample's extents (dimensions the spec does not name
are whole), so sample ``i`` of a map-style dataset is the ``i``-th tile in C
order: with ``{time: 1}`` it is step ``i``, with a window it is a box.  A
repeat reads ``batch x batches`` of them, in a random order from the workload
seed (``shuffle``) or in order, so every trial of a sweep reads the same samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from iotune.measuring.access import Selection
from iotune.model.spec import BatchSpec, Workload


@dataclass(frozen=True)
class Samples:
    """The tiling of an array into samples of one shape."""

    shape: tuple[int, ...]
    extents: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.shape) != len(self.extents) or not all(
            1 <= e <= n for e, n in zip(self.extents, self.shape, strict=True)
        ):
            raise ValueError(f"sample extents {self.extents} do not fit an array {self.shape}")

    @classmethod
    def of(cls, workload: Workload, spec: BatchSpec) -> Samples:
        """The samples ``spec`` draws from ``workload``."""
        named = dict(spec.sample)
        extents = tuple(named.get(d, n) for d, n in zip(workload.dims, workload.shape, strict=True))
        return cls(tuple(workload.shape), extents)

    @property
    def grid(self) -> tuple[int, ...]:
        """Samples along each dimension (a remainder shorter than a sample is left out)."""
        return tuple(n // e for n, e in zip(self.shape, self.extents, strict=True))

    def __len__(self) -> int:
        return math.prod(self.grid)

    @cached_property
    def _steps(self) -> tuple[tuple[int, int], ...]:
        """(samples in the dimensions after it, extent) per dimension, for ``selection``."""
        grid, after, steps = self.grid, 1, []
        for count, extent in zip(reversed(grid), reversed(self.extents), strict=True):
            steps.append((after, extent))
            after *= count
        return tuple(reversed(steps))

    def selection(self, index: int) -> Selection:
        """The selection of sample ``index`` (``0 <= index < len(self)``).

        On a loader's hot path, once per sample: plain integer arithmetic
        (``np.unravel_index`` costs five times as much).
        """
        out = []
        for after, extent in self._steps:
            origin, index = divmod(index, after)
            out.append(slice(origin * extent, origin * extent + extent))
        return tuple(out)


def batch_indices(workload: Workload, spec: BatchSpec) -> list[list[int]]:
    """The sample indices of each batch of one repeat, in the order they are read.

    Raises
    ------
    ValueError
        The workload holds fewer samples than the batches need (a smaller
        ``fidelity`` than the spec was checked against).
    """
    count, wanted = len(Samples.of(workload, spec)), spec.batch * spec.batches
    if wanted > count:
        raise ValueError(f"{wanted} samples wanted; the workload holds {count}")
    if spec.shuffle:
        order = np.random.default_rng([workload.seed, 0xBA7C4]).permutation(count)[:wanted]
    else:
        order = np.arange(wanted)
    return order.reshape(spec.batches, spec.batch).tolist()
