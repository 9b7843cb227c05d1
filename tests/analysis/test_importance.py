"""Which knobs matter, from a grid's or a search's points."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from iotune.analysis.importance import importance
from tests.search.conftest import SMALL_SPACE, _synthetic


@pytest.fixture(scope="module")
def small_grid():
    """The search tests' 24-point synthetic grid (all applicable), 5 repeats per point."""
    return _synthetic()(SMALL_SPACE, seed=1, noise=0.2)


def test_the_one_parameter_that_decides_comes_first(small_grid) -> None:
    ds = small_grid.copy(deep=True)
    # make chunks alone decide the timeseries read: 10x between chunk shapes
    ts = ds["read_MiBps"].sel(pattern="timeseries")
    factor = xr.DataArray([1.0, 3.0, 10.0], dims="chunks", coords={"chunks": ds["chunks"]})
    jitter = 1 + 0.01 * np.random.default_rng(0).random(ts.shape)
    shaped = 100.0 * factor * ts.copy(data=jitter)
    ds["read_MiBps"].loc[{"pattern": "timeseries"}] = shaped.transpose(*ts.dims).values
    found = importance(ds, "read:timeseries")
    assert next(iter(found.shares)) == "chunks" and found.shares["chunks"] > 0.5
    assert sum(found.shares.values()) == pytest.approx(1.0)
    assert found.text().startswith("what matters for read:timeseries: chunks ")
    assert "PED-ANOVA" in found.text()


def test_too_few_points_say_so(small_grid) -> None:
    few = small_grid.isel(chunks=[0], codec=[0, 1], chunk_cache=[0])
    found = importance(few, "write")
    assert found.shares == {} and "too few successful points" in found.text()


def test_recommend_reports_it(small_grid) -> None:
    from iotune.analysis.recommend import recommend
    from iotune.analysis.report import render_text

    rec = recommend(small_grid, objective="write")
    assert set(rec.importance) == {"chunks", "codec", "chunk_cache"}
    assert rec.importance_text in render_text(rec)
    assert rec.to_dict()["importance"] == rec.importance


#: a real sweep where ``level`` does not apply to codec ``none`` (memory backend: quick)
LEVELS = {
    "version": 1,
    "name": "levels",
    "workload": {"shape": {"time": 8, "y": 32, "x": 32}, "dtype": "int16"},
    "backend": "memory",
    "parameters": {
        "chunks": [[8, 32, 32], [1, 32, 32], [2, 16, 16]],
        "codec": ["none", "zlib"],
        "level": [1, 5, 9],
    },
    "read": {"patterns": ["full"]},
    "measure": {"repeats": 2, "cache": "warm", "fsync": False},
}


@pytest.fixture(scope="module")
def levels(tmp_path_factory):
    """The sweep's results: 3 points with codec none (level not applied), 9 with zlib."""
    import yaml

    from iotune.app import api

    where = tmp_path_factory.mktemp("levels")
    (where / "levels.yaml").write_text(yaml.safe_dump(LEVELS))
    return api.run(where / "levels.yaml", out=where / "out", progress=False)


def _write_speeds(ds: xr.Dataset, speed) -> xr.Dataset:
    """``ds`` with the write speed of each point set to ``speed(chunks, codec, level)``."""
    ds = ds.copy(deep=True)
    write = ds["write_MiBps"]
    chunks = list(ds["chunks"].values)
    for c in ds["chunks"].values:
        for codec in ds["codec"].values:
            for level in ds["level"].values:
                at = {"chunks": c, "codec": codec, "level": level}
                if np.isfinite(write.sel(at).values).all():
                    value = speed(chunks.index(c), str(codec), int(level))
                    write.loc[at] = value
    return ds


def _level_no_effect(ds: xr.Dataset) -> xr.Dataset:
    # none is the fastest, zlib half as fast whatever its level; chunks matter a little
    return _write_speeds(ds, lambda c, codec, level: (100.0 if codec == "none" else 50.0) - 10 * c)


def test_a_parameter_gets_no_share_from_points_it_did_not_apply_to(levels) -> None:
    """The ``none`` points store ``level=1``; ``none`` wins, yet level decides nothing.

    Counted on every point (as before), level took 7 % from the ``none`` points
    alone: their one stored level looked like a preference for 1.
    """
    found = importance(_level_no_effect(levels), "write")
    assert found.shares["level"] == 0.0
    assert found.points == 12 and found.applied == {"level": 9}
    assert next(iter(found.shares)) == "codec"


def test_where_it_applies_a_parameter_still_counts(levels) -> None:
    # zlib at level 1 is the fastest, the other levels and none slower
    ds = _write_speeds(
        levels,
        lambda c, codec, level: (
            (50.0 if codec == "none" else 100.0 if level == 1 else 40.0) - 10 * c
        ),
    )
    found = importance(ds, "write")
    assert found.shares["level"] > 0.2


def test_recommend_says_what_matters_in_words(levels, tmp_path, capsys) -> None:
    from iotune.cli.main import main
    from iotune.results.dataset import save

    path = save(_level_no_effect(levels), tmp_path / "results.nc")
    assert main(["recommend", str(path), "--objective", "write"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert (
        "what matters for write: codec 88 %, chunks 12 %, level 0 % (12 points, level on the 9 "
        "it applies to; PED-ANOVA importance in optuna: how much each decides reaching the "
        "best tenth)"
    ) in printed
