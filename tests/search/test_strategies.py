"""The ``auto`` strategy finds a recorded grid's best within a quarter of its points."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from iotune.results.dataset import open_results
from iotune.tuning import grid_sweep, replay_outcome

GRIDS = Path(__file__).resolve().parents[2] / "benchmarks" / "grids"


def fractions_of_best(grid, objective: str, strategy: str, seeds: range) -> list[float]:
    """The true value (grid median) of each seed's pick over the grid's best."""
    ranking = grid.iotune.rank(objective)
    best = ranking.best.score
    truth = {str(grid["trial_id"].sel(c.coords).values): c.score / best for c in ranking.candidates}
    picks = []
    for seed in seeds:
        overrides = {
            "search.strategy": strategy,
            "search.objective": objective,
            "search.budget": "25%",
            "search.seed": seed,
        }
        outcome = replay_outcome(grid_sweep(grid, overrides, "grid"), grid)
        picks.append(truth[outcome.recommended.trial.id])
    return picks


@pytest.mark.slow
def test_auto_meets_the_quality_target_on_a_recorded_grid() -> None:
    # issue 15's target, on 20 seeds: netCDF4 read:spatial has 10 of 108 points
    # within 0.90 of the best; random search on these seeds picks one in 12 of 20
    grid = open_results(GRIDS / "netcdf4-chunks-cache.nc")
    picks = fractions_of_best(grid, "read:spatial", "auto", range(20))
    assert statistics.median(picks) >= 0.95, picks
    assert sum(p >= 0.90 for p in picks) >= 16, picks
