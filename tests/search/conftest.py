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


@pytest.fixture(scope="session")
def small_grid_path(small_grid, tmp_path_factory) -> Path:
    from iotune.results.dataset import save

    return save(small_grid, tmp_path_factory.mktemp("grid") / "results.nc")


def write_million_spec(path: Path, *, budget: int = 30) -> Path:
    """A memory-backend spec of 1,140,480 grid points (chunk shapes x codecs x levels x shuffle)."""
    import yaml

    shapes = [
        [t, z, y, x]
        for t in range(1, 65)
        for z in (1, 2, 4, 8, 16)
        for y in (8, 16, 32)
        for x in (8, 16, 32)
    ]
    spec = {
        "version": 1,
        "name": "million",
        "workload": {"shape": {"time": 64, "z": 16, "y": 32, "x": 32}, "dtype": "int16"},
        "backend": "memory",
        "parameters": {
            "chunks": shapes,
            "codec": ["zstd", "blosc-zstd", "blosc-lz4", "zlib", "blosc-zlib", "bzip2"],
            "level": list(range(1, 23)),
            "shuffle": ["none", "byte", "bit"],
        },
        "read": {"patterns": ["full"]},
        "measure": {"repeats": 1, "cache": "warm", "fsync": False},
        "search": {"strategy": "auto", "budget": budget, "objective": "write", "seed": 0},
    }
    path.write_text(yaml.safe_dump(spec, default_flow_style=None, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def million_spec(tmp_path_factory) -> Path:
    return write_million_spec(tmp_path_factory.mktemp("million") / "million.yaml")
