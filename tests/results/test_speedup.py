"""The speedup over a baseline and its bootstrap interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iotune.results.speedup import interval_text, ratio_interval


def test_one_repeat_gives_the_ratio_and_no_interval() -> None:
    """One repeat resamples to itself: ``[x to x]`` would claim a certainty it lacks."""
    ratio, low, high = ratio_interval([100.0], [10.0, 11.0, 9.0])
    assert ratio == pytest.approx(10.0) and math.isnan(low) and math.isnan(high)
    assert interval_text(low, high) == "[n=1, no interval]"
    assert interval_text(0.9, 1.2) == "[0.9x to 1.2x]"


@pytest.mark.parametrize("n", [2, 3, 7])
def test_the_interval_holds_the_ratio_of_medians(n: int) -> None:
    rng = np.random.default_rng(n)
    best, base = rng.uniform(90, 110, n), rng.uniform(9, 11, n)
    ratio, low, high = ratio_interval(best, base)
    assert ratio == pytest.approx(np.median(best) / np.median(base))
    assert low <= ratio <= high
    assert low >= 90 / 11 and high <= 110 / 9  # no wider than the repeats allow


def test_the_interval_narrows_with_repeats() -> None:
    rng = np.random.default_rng(0)
    few = ratio_interval(rng.normal(100, 5, 3), rng.normal(10, 0.5, 3))
    many = ratio_interval(rng.normal(100, 5, 40), rng.normal(10, 0.5, 40))
    assert many[2] - many[1] < few[2] - few[1]


def test_the_same_repeats_give_the_same_interval() -> None:
    assert ratio_interval([3.0, 4.0, 5.0], [1.0, 2.0]) == ratio_interval(
        [3.0, 4.0, 5.0], [1.0, 2.0]
    )


def test_failed_repeats_are_dropped_and_none_left_is_nan() -> None:
    assert ratio_interval([4.0, math.nan], [2.0])[0] == 2.0
    assert all(math.isnan(v) for v in ratio_interval([math.nan], [2.0]))
