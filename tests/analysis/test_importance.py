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
