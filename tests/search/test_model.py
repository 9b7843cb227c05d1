"""The main-effects model: a lucky figure is pulled toward what its neighbours say."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from iotune.search.model import repeat_spread, shrunk


def additive(lucky: float = 0.0) -> tuple[list[dict[str, object]], np.ndarray]:
    """A 4 x 4 grid whose log score is a + b, the last point given ``lucky`` extra."""
    coords = [{"a": a, "b": b} for a, b in itertools.product(range(4), range(4))]
    scores = np.array([0.3 * c["a"] + 0.2 * c["b"] for c in coords])
    scores[-1] += lucky
    return coords, scores


def test_a_lucky_point_is_pulled_toward_its_neighbours() -> None:
    coords, scores = additive(lucky=0.8)
    found = shrunk(coords, scores, [5] * len(scores), spread=0.2)
    assert found[-1] < scores[-1] - 0.3  # most of the luck is gone ...
    assert found[-1] > scores[-1] - 0.8 - 0.1  # ... not more than there was
    assert np.abs(found[:-1] - scores[:-1]).max() < 0.2  # the others move less


def test_many_repeats_keep_a_point_near_its_own_score() -> None:
    coords, scores = additive(lucky=0.8)
    few = shrunk(coords, scores, [5] * len(scores), spread=0.2)
    many = shrunk(coords, scores, [5] * 15 + [500], spread=0.2)
    assert many[-1] > few[-1] and many[-1] == pytest.approx(scores[-1], abs=0.05)


def test_without_a_model_the_scores_stand() -> None:
    coords, scores = additive()
    assert shrunk(coords[:3], scores[:3], [5] * 3, spread=0.2).tolist() == scores[:3].tolist()
    assert shrunk(coords, scores, [5] * 16, spread=math.nan).tolist() == scores.tolist()


def test_the_spread_of_one_repeat() -> None:
    rng = np.random.default_rng(0)
    repeats = [rng.normal(m, 0.1, size=5) for m in rng.uniform(0, 5, size=200)]
    assert repeat_spread(repeats) == pytest.approx(0.1, rel=0.15)
    assert math.isnan(repeat_spread([np.array([1.0])]))
