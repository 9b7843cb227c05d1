"""The noise floor: the relative width of the probes' interval of their median."""

from __future__ import annotations

import math

import pytest

from iotune.results.noise import floor


def test_six_or_more_probes_use_the_interval_of_the_median():
    # n = 9: the 95 % interval of the median runs from the 2nd smallest to the 2nd largest
    # (1 - 2 P(Binomial(9, 1/2) <= 1) = 0.961); one outlier on each side is ignored
    values = [50.0, 90.0, 95.0, 100.0, 100.0, 100.0, 105.0, 110.0, 400.0]
    assert floor(values) == pytest.approx((110.0 - 90.0) / 100.0)
    # n = 8 has no such interval at rank 2 (0.930): the extremes bound it
    assert floor(values[1:]) == pytest.approx((400.0 - 90.0) / 100.0)


def test_fewer_probes_use_their_range_and_one_probe_says_nothing():
    assert floor([90.0, 100.0, 120.0]) == pytest.approx(30.0 / 100.0)
    assert math.isnan(floor([100.0])) and math.isnan(floor([math.nan, 100.0]))


def test_identical_probes_have_no_floor_and_missing_values_are_dropped():
    assert floor([100.0] * 7) == 0.0
    assert floor([100.0, math.nan, 100.0, 110.0]) == pytest.approx(0.1)
