"""The lazy space: the plan's applicability and points, without building the grid."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from iotune.app.api import load_spec
from iotune.runner.plan import make_plan
from iotune.search.space import Resolved, Space

SWEEPS = Path(__file__).resolve().parents[2] / "sweeps"


@pytest.mark.parametrize(
    ("spec", "overrides"),
    [
        ("quick.yaml", {"parameters.level": [1, 4], "parameters.shuffle": ["none", "byte"]}),
        ("mpi-hints.yaml", {}),
        ("formats.yaml", {}),
    ],
)
def test_points_and_trials_are_the_plans(spec: str, overrides: dict) -> None:
    """Every grid point resolves to the plan's trial and shows as the plan's own point."""
    sweep = load_spec(SWEEPS / spec, overrides=overrides)
    plan, space = make_plan(sweep), Space(sweep)
    owners = {p.trial_id: p.coords for p in plan.points if p.trial_id}
    for point in plan.points:
        found = space.resolve(point.coords)
        if isinstance(found, str):
            assert point.trial_id is None and point.reason == found
            continue
        assert found.trial in plan.trials
        assert found.coords == owners[found.trial.id]
    # the grid's own trials: the plan adds the spec's baselines (quick.yaml's) after them
    assert space.applicable_estimate() == len(owners)
    assert len(plan.trials) == len(owners) + len(
        {b.trial_id for b in plan.baselines if b.trial_id} - {*owners}
    )
    assert space.size == len(plan.points)


def test_a_million_points_without_enumerating_them(million_spec) -> None:
    space = Space(load_spec(million_spec))
    assert space.size == 1_140_480
    start = time.perf_counter()
    estimate = space.applicable_estimate()
    assert time.perf_counter() - start < 10
    assert 0 < estimate < space.size  # levels above 9 apply to zstd alone


def test_ordered_dimensions_use_ranks() -> None:
    sweep = load_spec(SWEEPS / "quick.yaml")
    space = Space(sweep)
    cache = next(d for d in space.dims if d.name == "chunk_cache")
    assert cache.ordered and cache.choices() == (0, 1)
    assert cache.label_of(1) == 64 * 2**20 and cache.choice_of(2**20) == 0
    chunks = next(d for d in space.dims if d.name == "chunks")
    assert not chunks.ordered and chunks.label_of("8x128x128") == "8x128x128"
    found = space.resolve({"chunks": "8x128x128", "codec": "zlib", "chunk_cache": 2**20})
    assert isinstance(found, Resolved) and found.trial.params["codec"] == "zlib"
