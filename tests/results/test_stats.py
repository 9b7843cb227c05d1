"""The rank test over repeats and its verdict, against known values and brute force."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest

from iotune.core.errors import RecommendError
from iotune.results import stats
from iotune.results.stats import Separation, min_p_value, rank_test, separate


def brute_force_p(x: list[float], y: list[float]) -> float:
    """P(U >= U observed) over every split of the pooled values into len(x) and len(y)."""

    def u(a: list[float], b: list[float]) -> float:
        return sum((ai > bj) + 0.5 * (ai == bj) for ai in a for bj in b)

    pooled, n = [*x, *y], len(x)
    observed = u(x, y)
    hits = total = 0
    for chosen in itertools.combinations(range(len(pooled)), n):
        a = [pooled[i] for i in chosen]
        b = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        hits += u(a, b) >= observed - 1e-9
        total += 1
    return hits / total


# --- the test ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "y", "p"),
    [
        ([4, 5, 6], [1, 2, 3], 1 / 20),  # complete separation, 3 and 3
        ([6, 7, 8, 9, 10], [1, 2, 3, 4, 5], 1 / 252),  # 5 and 5
        ([7, 8, 9, 10, 11, 12], [1, 2, 3, 4, 5, 6], 1 / 924),  # 6 and 6
        ([3, 4, 5], [1, 2], 1 / 10),  # 3 and 2
        ([1, 2, 3], [4, 5, 6], 1.0),  # the other way round: every split is as extreme
        ([9.5, 10, 10.5], [9.31, 9.8, 10.29], 7 / 20),  # U = 6 of 9: 7 splits of 20 reach it
        ([2, 4], [1, 3], 2 / 6),  # U = 3 of 4 (by hand: splits {3,4} and {2,4})
    ],
)
def test_known_p_values(x: list[float], y: list[float], p: float) -> None:
    assert rank_test(x, y).p_value == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ([5.1, 3.2, 8.8, 7.0], [1.0, 4.4, 2.2, 6.1, 0.5]),
        ([1, 2, 2, 3], [2, 2, 1]),  # ties across the samples
        ([1, 1], [1, 1]),  # all tied: no evidence at all
        ([3, 3, 4, 4, 5], [3, 4, 4, 1]),
        ([10, 11, 12, 12], [12, 12, 13, 9, 8, 7]),
        ([2, 2, 2, 5], [2, 2, 1, 1, 1]),
    ],
)
def test_exact_p_value_equals_brute_force_enumeration(x: list[float], y: list[float]) -> None:
    assert rank_test(x, y).p_value == pytest.approx(brute_force_p(x, y), rel=1e-12)
    # the other direction is the same test with the signs flipped
    flipped = brute_force_p([-v for v in x], [-v for v in y])
    assert rank_test(x, y, larger=False).p_value == pytest.approx(flipped, rel=1e-12)


def test_random_samples_match_brute_force() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        n, m = rng.integers(1, 7, size=2)
        x = rng.integers(0, 6, size=n).tolist()  # small integers: many ties
        y = rng.integers(0, 6, size=m).tolist()
        assert rank_test(x, y).p_value == pytest.approx(brute_force_p(x, y), rel=1e-12)


def test_ties_are_exact_not_the_no_ties_table() -> None:
    # equal repeats are no evidence: the no-ties table on mid-ranks would say p = 0.5
    assert rank_test([7.0], [7.0]).p_value == 1.0
    assert rank_test([1, 1], [1, 1]).p_value == 1.0


def test_smaller_is_better_flips_the_direction() -> None:
    fast, slow = [1.0, 1.1, 1.2], [2.0, 2.1, 2.2]  # seconds
    assert rank_test(fast, slow, larger=False).p_value == pytest.approx(0.05)
    assert rank_test(fast, slow).p_value == pytest.approx(1.0)


def test_nan_repeats_are_dropped() -> None:
    test = rank_test([4, np.nan, 5, 6], [1, 2, np.nan, 3, np.nan])
    assert (test.n, test.m) == (3, 3)
    assert test.p_value == pytest.approx(0.05)
    with pytest.raises(ValueError, match="needs a value on each side, not 0 and 2"):
        rank_test([np.nan], [1.0, 2.0])


def test_u_shift_and_relative_difference() -> None:
    test = rank_test([10.0, 12.0, 14.0], [8.0, 9.0, 13.0])
    assert test.u == 7  # 10 > 8, 9; 12 > 8, 9; 14 > 8, 9, 13
    # pairwise differences 2 1 -3 4 3 -1 6 5 1: median 2
    assert test.shift == 2.0
    assert test.relative == pytest.approx(9.0 / 12.0 - 1)
    assert rank_test([1.0], [1.0]).u == 0.5  # a tie counts half
    assert math.isnan(rank_test([0.0, 0.0], [1.0]).relative)


def test_min_p_value() -> None:
    assert min_p_value(3, 3) == pytest.approx(0.05)
    assert min_p_value(5, 5) == pytest.approx(1 / 252)
    assert min_p_value(2, 2) == pytest.approx(1 / 6)
    assert min_p_value(2, 5) == pytest.approx(1 / 21)  # below 0.05 with only 2 on one side
    assert min_p_value(0, 4) == 1.0


def test_fifty_repeats_each_are_exact_and_fast() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.normal(1.0, 1.0, 50), rng.normal(0.0, 1.0, 50)
    start = time.perf_counter()
    test = rank_test(x, y)
    assert time.perf_counter() - start < 2.0
    assert test.exact and test.p_value < 1e-3
    # complete separation of 50 and 50: 1 / comb(100, 50)
    assert rank_test(np.arange(50) + 50.0, np.arange(50.0)).p_value == pytest.approx(
        1 / math.comb(100, 50), rel=1e-9
    )


def test_larger_samples_use_the_normal_approximation(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    x, y = rng.normal(0.3, 1.0, 60).round(1), rng.normal(0.0, 1.0, 55).round(1)  # with ties
    approx = rank_test(x, y)
    assert not approx.exact
    monkeypatch.setattr(stats, "EXACT_LIMIT", 100)
    exact = rank_test(x, y)
    assert exact.exact
    assert approx.p_value == pytest.approx(exact.p_value, abs=0.005)


# --- the verdict -------------------------------------------------------------------


def verdict(x: list[float], y: list[float], **kwargs: object) -> Separation:
    options = {"runner_up": "chunks=auto", "quantity": "write", "unit": "MiB/s", **kwargs}
    return separate(x, y, **options)  # type: ignore[arg-type]


def test_beats_beyond_noise() -> None:
    sep = verdict([10.0, 10.5, 11.0, 10.2, 10.8, 10.4], [9.0, 9.3, 9.1, 9.5, 8.8, 9.2])
    assert sep.beats is True
    assert sep.p_value == pytest.approx(1 / 924)
    assert sep.repeats == (6, 6)
    assert sep.text == (
        "the winner beats the runner-up (chunks=auto, 12.4% slower) beyond noise: "
        "one-sided Mann-Whitney p = 0.0011 over 6 and 6 repeats"
    )


def test_not_separable() -> None:
    sep = verdict([9.5, 10.0, 10.5], [9.31, 9.8, 10.29])
    assert sep.beats is False
    assert sep.text == (
        "the winner is not separable from the runner-up (chunks=auto, 2.0% slower): "
        "one-sided Mann-Whitney p = 0.35 over 3 and 3 repeats; "
        "measure more repeats (measure.repeats: auto)"
    )


def test_too_few_repeats_to_tell() -> None:
    sep = verdict([10.0, 11.0], [1.0, 2.0])
    assert sep.beats is None
    assert sep.p_value == pytest.approx(1 / 6)
    assert sep.text == (
        "cannot tell whether the winner beats the runner-up (chunks=auto, 85.7% slower): "
        "too few repeats to tell (2 and 2); measure more repeats (measure.repeats: auto)"
    )
    # 2 against 5 can reach 0.05 (1/21), so it is told
    assert verdict([10.0, 11.0], [1.0, 2.0, 3.0, 4.0, 5.0]).beats is True
    # a stricter level needs more repeats
    assert verdict([4.0, 5.0, 6.0], [1.0, 2.0, 3.0], alpha=0.01).beats is None
    assert verdict([4.0, 5.0, 6.0], [1.0, 2.0, 3.0], alpha=0.1).beats is True
    nothing = verdict([np.nan], [1.0])
    assert nothing.beats is None and nothing.p_value is None and nothing.repeats == (0, 1)
    assert "too few repeats to tell (0 and 1)" in nothing.text


def test_seconds_scores_and_intervals_in_the_text() -> None:
    sep = verdict([1.0, 1.1, 1.2], [2.0, 2.1, 2.2], quantity="read_s", unit="s", larger=False)
    assert sep.beats is True and "(chunks=auto, 90.9% slower)" in sep.text
    score = verdict([0.9, 1.0, 0.95], [0.5, 0.6, 0.55], quantity="score", unit="1")
    assert "(chunks=auto, score 42.1% lower)" in score.text
    both = verdict([9.5, 10.0, 10.5], [7.6, 8.0, 8.4], intervals_overlap={"write": True})
    assert both.beats is True  # the rank test decides, whatever the intervals say
    assert both.text.endswith(
        "over 3 and 3 repeats; their confidence intervals of the median overlap"
    )
    apart = verdict([9.5, 10.0, 10.5], [7.6, 8.0, 8.4], intervals_overlap={"write": False})
    assert apart.text.endswith("do not overlap")
    mixed = verdict([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], intervals_overlap={"write": True, "r": False})
    assert "(chunks=auto, same median)" in mixed.text
    assert "; their confidence intervals of the median overlap for write, not for r; measure" in (
        mixed.text
    )


@pytest.mark.parametrize("alpha", [0, 1, 1.5, -0.1, "0.05", True])
def test_bad_alpha(alpha: object) -> None:
    with pytest.raises(RecommendError, match=r"alpha: .*; allowed: a significance level from 0"):
        verdict([1.0], [2.0], alpha=alpha)


@pytest.mark.parametrize(
    ("unit", "larger", "winner", "runner", "how"),
    [
        ("MiB/s", True, [1.0, 2.0, 3.0], [10.0, 11.0, 12.0], "450.0% faster"),
        ("s", False, [10.0, 11.0, 12.0], [1.0, 2.0, 3.0], "81.8% faster"),
    ],
)
def test_a_runner_up_with_the_better_median_is_never_said_to_be_beaten(
    unit: str, larger: bool, winner: list[float], runner: list[float], how: str
) -> None:
    """A winner picked by another rule: the line tests the other way and says the rule."""
    sep = separate(
        winner, runner, runner_up="b", quantity="m", unit=unit, larger=larger, why="for its size"
    )
    assert sep.runner_up_ahead and sep.beats is False
    assert sep.text == (
        f"the runner-up (b) has the better median, {how}, beyond noise: one-sided "
        "Mann-Whitney p = 0.05 over 3 and 3 repeats; the winner was picked for its size"
    )
    few = separate(winner[:2], runner[:2], runner_up="b", quantity="m", unit=unit, larger=larger)
    assert few.text.startswith("the runner-up (b) has the better median, ")
    assert few.text.endswith(
        "faster; too few repeats to tell them apart (2 and 2); the winner was picked by "
        "another rule than the median of m"
    )
