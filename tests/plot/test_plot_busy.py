"""The accelerator utilisation against num_workers, at the sweep's step, from crafted results."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from matplotlib.container import ErrorbarContainer

from iotune.core.errors import ResultsError
from iotune.plot.busy import has_utilisation, utilisation
from tests.plot.figures import legends, texts_outside

WORKERS = [0, 2, 4]
#: utilisation at (backend, chunks, num_workers); repeats are this -0.02 and +0.02
BUSY = np.array(
    [
        [[0.40, 0.80, 0.95], [0.30, 0.60, 0.85]],  # netcdf4: 1x64x64, 8x32x32
        [[0.50, 0.92, 0.97], [0.20, np.nan, 0.70]],  # zarr; 8x32x32 with 2 workers failed
    ]
)


def results(*, step: float | None = 0.05, swept: str = "backend chunks num_workers") -> xr.Dataset:
    """A batches sweep's results: two formats, two chunk shapes, three worker counts."""
    values = BUSY[..., None, None] + np.array([-0.02, 0.02])  # (..., pattern, repeat)
    dims = ("backend", "chunks", "num_workers", "pattern", "repeat")
    batches = {"sample": {"time": 1}, "batch": 8, "batches": 20, "shuffle": True}
    return xr.Dataset(
        {"read_utilisation": (dims, values, {"units": "1"})},
        coords={
            "backend": ["netcdf4", "zarr"],
            "chunks": ["1x64x64", "8x32x32"],
            "num_workers": WORKERS,
            "pattern": ["batches"],
            "repeat": [0, 1],
        },
        attrs={
            "name": "train",
            "schema_version": 1,
            "swept": swept,
            "batches": json.dumps(batches | ({"step": step} if step else {})),
        },
    )


def test_one_line_per_layout_of_median_percent_against_workers() -> None:
    fig = utilisation(results())
    (ax,) = fig.axes
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 4  # netcdf4 and zarr, two chunk shapes each
    for bar, expected in zip(bars, BUSY.reshape(4, 3), strict=True):
        x, y = bar.lines[0].get_data()
        assert list(x) == WORKERS
        np.testing.assert_allclose(y, expected * 100)  # the failed point stays a gap (NaN)
    (legend,) = legends(fig)
    assert legend.get_title().get_text() == "backend chunks"
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["netcdf4 1x64x64", "netcdf4 8x32x32", "zarr 1x64x64", "zarr 8x32x32"]
    assert ax.get_xlabel() == "num_workers" and ax.get_ylabel() == "accelerator utilisation (%)"


def test_the_mlperf_threshold_and_the_step_are_drawn_and_every_text_fits() -> None:
    fig = utilisation(results(step=0.05))
    (ax,) = fig.axes
    flat = [line for line in ax.get_lines() if set(line.get_ydata()) == {90.0}]
    assert len(flat) == 1, "the 90 % line"
    assert "MLPerf Storage: 90%" in [t.get_text() for t in ax.texts]
    title = fig.get_suptitle()
    assert "accelerator utilisation against num_workers, step 50 ms a batch" in title
    assert "median of 2 repeats" in title
    assert texts_outside(fig) == []


def test_results_without_a_step_or_swept_workers_are_refused() -> None:
    with pytest.raises(ResultsError, match=r"read\.batches\.step"):
        utilisation(results(step=None))
    with pytest.raises(ResultsError, match="num_workers is not a swept parameter"):
        utilisation(results(swept="backend chunks").isel(num_workers=0, drop=True))


def test_a_parameter_of_one_value_names_no_layout() -> None:
    ds = results(swept="backend chunks codec num_workers").expand_dims(codec=["none"])
    (legend,) = legends(utilisation(ds))
    assert legend.get_title().get_text() == "backend chunks"
    assert legend.get_texts()[0].get_text() == "netcdf4 1x64x64"


def test_has_utilisation_only_with_a_step_and_swept_workers() -> None:
    assert has_utilisation(results())
    assert not has_utilisation(results(step=None))
    assert not has_utilisation(results(swept="backend chunks").isel(num_workers=0, drop=True))
