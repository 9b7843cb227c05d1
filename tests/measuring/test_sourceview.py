"""The trial's variable as the user's file shows it: coordinates, attributes, CF decoding."""

from __future__ import annotations

from pathlib import Path

import cftime
import numpy as np
import pytest
import xarray as xr

from iotune.measuring import sourceview
from iotune.measuring.data import Field
from iotune.specfile.parse import parse_workload


@pytest.fixture(params=["nc", "zarr"])
def source(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """tas(time, lat, lon) packed in int16 with a fill value; times in a noleap calendar."""
    packed = np.arange(6 * 4 * 5, dtype="int16").reshape(6, 4, 5)
    packed[1, 2, 3] = -1
    attrs = {"units": "K", "scale_factor": 0.5, "add_offset": 200.0, "_FillValue": np.int16(-1)}
    time = ("time", np.arange(6) * 30.0, {"units": "days since 2000-01-01", "calendar": "noleap"})
    path = tmp_path / f"tas.{request.param}"
    dataset = xr.Dataset(
        {"tas": (("time", "lat", "lon"), packed, attrs)},
        coords={"time": time, "lat": [-30.0, -10.0, 10.0, 30.0], "lon": np.arange(5) * 72.0},
        attrs={"title": "mine"},
    )
    if request.param == "zarr":
        dataset.to_zarr(path)
    else:
        dataset.to_netcdf(path)
    return path


def trial(tmp_path: Path, workload) -> xr.Dataset:
    """What a trial's file holds, opened lazily: the raw values as ``data``, nothing else."""
    path = tmp_path / "trial.nc"
    xr.Dataset({"data": (workload.dims, Field(workload).slab(0, workload.shape[0]))}).to_netcdf(
        path
    )
    return xr.open_dataset(path)


def test_a_file_workload_is_seen_as_xarray_opens_the_file(tmp_path: Path, source: Path) -> None:
    workload = parse_workload({"field": "file", "path": str(source), "variable": "tas"})
    with trial(tmp_path, workload) as opened, xr.open_dataset(source, chunks=None) as want:
        seen = sourceview.view(opened, workload)
        assert not seen["tas"].variable._in_memory  # attached around the lazy variable, not read
        xr.testing.assert_identical(seen.load(), want.load())
    assert isinstance(seen["time"].values[0], cftime.DatetimeNoLeap)
    assert np.isnan(seen["tas"].values[1, 2, 3]) and seen["tas"].values[0, 0, 1] == 200.5


def test_cropped_and_tiled_coordinates_follow_the_values(tmp_path: Path, source: Path) -> None:
    shape = {"time": 9, "lat": 2, "lon": 5}
    workload = parse_workload(
        {"field": "file", "path": str(source), "variable": "tas", "shape": shape}
    )
    with trial(tmp_path, workload) as opened, xr.open_dataset(source) as full:
        seen = sourceview.view(opened, workload).load()
        np.testing.assert_array_equal(seen["lat"], [-30.0, -10.0])
        steps = np.arange(9) % 6  # the record dimension repeats the file's, times and all
        np.testing.assert_array_equal(seen["time"].values, full["time"].values[steps])
        xr.testing.assert_equal(
            seen["tas"].drop_vars("time"),
            full["tas"].isel(time=steps, lat=slice(0, 2)).drop_vars("time"),
        )


def test_a_generated_workload_has_index_coordinates(tmp_path: Path) -> None:
    workload = parse_workload({"shape": {"time": 6, "y": 4, "x": 5}})
    with trial(tmp_path, workload) as opened:
        seen = sourceview.view(opened, workload)
        assert list(seen.data_vars) == ["data"]
        np.testing.assert_array_equal(seen["time"], np.arange(6))
        np.testing.assert_array_equal(seen["data"].sel(y=slice(1, 2)), opened["data"][:, 1:3])
