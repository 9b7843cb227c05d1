"""The break-even arithmetic: n = (one-off_a - one-off_b) / (per-read_b - per-read_a)."""

from __future__ import annotations

import math

import pytest

from iotune.results.breakeven import break_even


def test_reads_are_the_extra_one_off_over_the_seconds_saved_each_read() -> None:
    # a rewrite of 10 s (median) against the file as it is: 3 s a read instead of 1 s
    found = break_even([9.0, 10.0, 11.0], None, [[1.0, 1.1, 0.9]], [[3.0, 2.9, 3.1]])
    assert found.reads == pytest.approx(10.0 / (3.0 - 1.0))
    assert found.extra_s == pytest.approx(10.0) and found.saved_s == pytest.approx(2.0)
    assert found.low <= found.reads <= found.high and math.isfinite(found.high)
    assert not found.never


def test_several_patterns_are_one_read_of_each() -> None:
    found = break_even([4.0, 4.0], [1.0, 1.0], [[1.0, 1.0], [2.0, 2.0]], [[2.0, 2.0], [3.0, 3.0]])
    assert found.reads == pytest.approx((4.0 - 1.0) / ((2.0 + 3.0) - (1.0 + 2.0)))


def test_a_way_that_reads_no_faster_never_pays() -> None:
    found = break_even([10.0, 11.0], None, [[2.0, 2.1]], [[2.0, 1.9]])
    assert found.never and math.isinf(found.reads) and math.isinf(found.high)
    assert found.saved_s <= 0


def test_one_repeat_gives_no_interval() -> None:
    found = break_even([10.0], None, [[1.0]], [[3.0]])
    assert found.reads == pytest.approx(5.0)
    assert math.isnan(found.low) and math.isnan(found.high)


def test_noise_that_may_read_no_faster_leaves_the_interval_open() -> None:
    # the medians save 0.1 s a read, but resamples of these repeats reverse it
    found = break_even([1.0, 1.0, 1.0], None, [[1.0, 0.5, 1.6]], [[1.1, 0.6, 1.5]])
    assert math.isfinite(found.reads) and math.isinf(found.high)
