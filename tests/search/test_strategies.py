"""The ``auto`` strategy finds a recorded grid's best within a quarter of its points."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from iotune.app.tuning import grid_sweep, replay_outcome
from iotune.results.dataset import open_results
from iotune.search.replay import fractions_of_best

GRIDS = Path(__file__).resolve().parents[2] / "benchmarks" / "grids"


def picks(grid, objective: str, strategy: str, seeds: range) -> list[float]:
    """The true value (grid median) of each seed's pick over the grid's best."""
    truth = fractions_of_best(grid, objective)
    found = []
    for seed in seeds:
        overrides = {
            "search.strategy": strategy,
            "search.objective": objective,
            "search.budget": "25%",
            "search.seed": seed,
        }
        outcome = replay_outcome(grid_sweep(grid, overrides, "grid"), grid)
        found.append(truth[outcome.leader.trial.id])
    return found


@pytest.mark.slow
def test_auto_meets_the_quality_target_on_a_recorded_grid() -> None:
    # issue 15's target, on 20 seeds: netCDF4 read:spatial has 10 of 108 points
    # within 0.90 of the best; random search on these seeds picks one in 12 of 20
    grid = open_results(GRIDS / "netcdf4-chunks-cache.nc")
    found = picks(grid, "read:spatial", "auto", range(20))
    assert statistics.median(found) >= 0.95, found
    assert sum(p >= 0.90 for p in found) >= 16, found
