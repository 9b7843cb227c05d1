"""Fixtures of the search tests: synthetic recorded grids (benchmarks/synthetic_grid.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
#: a 24-point space of quick.yaml: fast to replay, big enough to search
SMALL_SPACE = {
    "workload.shape": {"time": 16, "y": 64, "x": 64},
    "parameters.chunks": [[16, 16, 16], [4, 64, 64], [1, 64, 64]],
    "parameters.codec": ["none", "zlib", "blosc-lz4", "bzip2"],
    "parameters.chunk_cache": ["1MiB", "64MiB"],
    "read.spatial": {"time": 4, "y": 32, "x": 32},
    "measure.repeats": 5,
}


def _synthetic():
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    from synthetic_grid import synthetic_grid

    return synthetic_grid


@pytest.fixture(scope="session")
def grid150():
    """A 150-point synthetic grid (130 applicable) with 5 repeats per point."""
    return _synthetic()(seed=0, noise=0.15)


@pytest.fixture(scope="session")
def small_grid():
    """A 24-point synthetic grid (all applicable) with 5 repeats per point."""
    return _synthetic()(SMALL_SPACE, seed=1, noise=0.2)


#: the two configurations of :func:`tied_grid`: the faster median stores twice as much
TIED_BIG = {"chunks": "4x64x64", "codec": "none", "chunk_cache": 1048576}
TIED_SMALL = {"chunks": "4x64x64", "codec": "zlib", "chunk_cache": 1048576}


def tied_grid(grid):
    """``grid`` (the small synthetic one) with every write slow but two whose repeats
    overlap: :data:`TIED_BIG` has the higher median, :data:`TIED_SMALL` half its size."""
    grid = grid.copy(deep=True)
    grid["write_MiBps"] *= 0.1
    grid["write_MiBps"].loc[TIED_BIG] = [98.0, 100.0, 102.0, 104.0, 106.0]
    grid["write_MiBps"].loc[TIED_SMALL] = [97.0, 99.0, 101.0, 103.0, 105.0]
    grid["file_bytes"].loc[TIED_BIG] = 120_000.0
    grid["file_bytes"].loc[TIED_SMALL] = 60_000.0
    return grid


@pytest.fixture(scope="session")
def small_grid_path(small_grid, tmp_path_factory) -> Path:
    from iotune.results.dataset import save

    return save(small_grid, tmp_path_factory.mktemp("grid") / "results.nc")


@pytest.fixture(scope="session")
def million_spec(tmp_path_factory) -> Path:
    _synthetic()  # puts benchmarks/ on the path
    from search_memory import write_million_spec

    return write_million_spec(tmp_path_factory.mktemp("million") / "million.yaml")


def replayed_search(grid, *, policies=None, prior=(), **overrides):
    """A search over ``grid``'s own spec answered from its repeats (not yet run).

    ``overrides`` are dotted spec paths with ``__`` for the dots
    (``search__budget=12``); ``policies`` replaces the default ones.
    """
    from iotune.app.tuning import goal_of, grid_sweep, task_maker
    from iotune.search.loop import Search
    from iotune.search.replay import ReplayMeasurer

    given = {"search.objective": "read:timeseries"}
    given |= {k.replace("__", "."): v for k, v in overrides.items()}
    sweep = grid_sweep(grid, given, "grid")
    assert sweep.search is not None
    return Search(
        sweep,
        goal=goal_of(sweep, sweep.search),
        measurer=ReplayMeasurer(grid, seed=sweep.search.seed),
        task=task_maker(sweep, "replay"),
        parallel=sweep.search.parallel or 1,
        prior=prior,
        policies=policies,
    )
