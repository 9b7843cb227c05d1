"""The batches pattern's samples: tiles in C order, and the batches a repeat reads."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.measuring.samples import Samples, batch_indices
from iotune.model.spec import BatchSpec, Workload

WORKLOAD = Workload(("time", "y", "x"), (10, 64, 48), seed=7)


def test_one_step_per_sample_is_a_map() -> None:
    samples = Samples.of(WORKLOAD, BatchSpec((("time", 1),)))
    assert len(samples) == 10 and samples.grid == (10, 1, 1)
    assert samples.selection(3) == (slice(3, 4), slice(0, 64), slice(0, 48))


def test_a_window_tiles_the_array_in_c_order_leaving_out_a_remainder() -> None:
    samples = Samples.of(WORKLOAD, BatchSpec((("time", 4), ("y", 32), ("x", 20))))
    assert samples.grid == (2, 2, 2) and len(samples) == 8
    assert samples.selection(0) == (slice(0, 4), slice(0, 32), slice(0, 20))
    assert samples.selection(5) == (slice(4, 8), slice(0, 32), slice(20, 40))
    covered = np.zeros(WORKLOAD.shape, dtype=int)
    for i in range(len(samples)):
        covered[samples.selection(i)] += 1
    assert covered.max() == 1 and covered.sum() == 8 * 4 * 32 * 20


def test_shuffled_batches_are_distinct_samples_the_same_on_every_call() -> None:
    spec = BatchSpec((("time", 1),), batch=3, batches=3, shuffle=True)
    drawn = batch_indices(WORKLOAD, spec)
    assert drawn == batch_indices(WORKLOAD, spec)
    flat = [i for batch in drawn for i in batch]
    assert len(drawn) == 3 and all(len(b) == 3 for b in drawn)
    assert len(set(flat)) == 9 and flat != sorted(flat)
    other = Workload(WORKLOAD.dims, WORKLOAD.shape, seed=8)
    assert batch_indices(other, spec) != drawn


def test_unshuffled_batches_are_in_order() -> None:
    spec = BatchSpec((("time", 1),), batch=4, batches=2, shuffle=False)
    assert batch_indices(WORKLOAD, spec) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_more_samples_than_the_workload_holds_are_refused() -> None:
    with pytest.raises(ValueError, match="12 samples wanted; the workload holds 10"):
        batch_indices(WORKLOAD, BatchSpec((("time", 1),), batch=4, batches=3))


def test_a_batch_spec_is_checked_when_made() -> None:
    with pytest.raises(ValueError, match=r"read\.batches\.batch: 0"):
        BatchSpec((("time", 1),), batch=0)
    with pytest.raises(ValueError, match=r"read\.batches\.sample\.time"):
        BatchSpec((("time", 0),))
    with pytest.raises(ValueError, match="do not fit"):
        Samples((4, 4), (8, 1))
