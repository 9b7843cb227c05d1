"""The batches pattern's consuming loop, and its steady-state figures.

A training loop takes a batch, computes on it (``step`` seconds on an
accelerator, simulated by sleeping) and takes the next.  The first batch
includes starting the loader (workers, opening the store), so the figures a
user plans with are those after it: samples per second over the arrivals of
batches ``1 .. n-1``, and the accelerator utilisation as MLPerf Storage
defines it, compute time over the total time of that loop.  The time to the
first batch is recorded apart.
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator
from dataclasses import dataclass

MiB = 2**20


@dataclass(frozen=True)
class Timeline:
    """When each batch was in hand (seconds from the loader's start) and what came."""

    ready: tuple[float, ...]
    total: float
    delivered: int


def consume(batches: Generator[int, None, None], count: int, step: float) -> Timeline:
    """Take ``count`` batches (their sizes in bytes) from ``batches``, computing ``step`` s on each.

    The loader is not closed here: the caller stops it after the timed span.
    """
    ready: list[float] = []
    delivered = 0
    t0 = time.perf_counter()
    for _k, nbytes in zip(range(count), batches, strict=False):
        ready.append(time.perf_counter() - t0)
        delivered += nbytes
        if step:
            time.sleep(step)  # as a training step computes before it asks for the next batch
    return Timeline(tuple(ready), time.perf_counter() - t0, delivered)


def figures(timeline: Timeline, batch: int, step: float) -> dict[str, float | int]:
    """A repeat's read entry: totals, and samples/s and utilisation after the first batch.

    With one batch there is no steady state: samples/s is over the whole read and
    the utilisation NaN.
    """
    ready, total = timeline.ready, timeline.total
    count = batch * len(ready)
    span = ready[-1] - ready[0] if len(ready) > 1 else 0.0
    steady = (len(ready) - 1) * batch / span if span > 0 else count / total
    return {
        "s": total,
        "bytes": timeline.delivered,
        "ops": count,
        "MiBps": timeline.delivered / MiB / total,
        "ops_per_s": count / total,
        "samples_per_s": steady,
        "first_batch_s": ready[0],
        "utilisation": (len(ready) - 1) * step / span if span > 0 and step else math.nan,
    }
