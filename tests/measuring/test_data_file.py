"""``field: file``: a user's netCDF file or Zarr store as the data trials write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from iotune.core.errors import SpecError
from iotune.measuring.data import Field
from iotune.model.records import TrialTask
from iotune.runner.plan import make_plan
from iotune.runner.trial import run_trial
from iotune.specfile.parse import load_spec, parse_spec

T, LAT, LON = 6, 5, 7


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict:
    """``src.nc`` and ``src.zarr`` holding an int16 ``t2m`` and a float32 ``precip`` with a NaN."""
    root = tmp_path_factory.mktemp("sources")
    rng = np.random.default_rng(42)
    t2m = rng.integers(-3000, 3000, size=(T, LAT, LON)).astype("int16")
    precip = rng.gamma(2.0, 3.0, size=(T, LAT, LON)).astype("float32")
    precip[2, 1, 3] = np.nan
    ds = xr.Dataset(
        {"t2m": (("time", "lat", "lon"), t2m), "precip": (("time", "lat", "lon"), precip)},
        coords={
            "time": np.arange(T),
            "lat": np.linspace(-10, 10, LAT),
            "lon": np.linspace(0, 30, LON),
        },
    )
    ds.to_netcdf(root / "src.nc")
    ds.to_zarr(root / "src.zarr", consolidated=False)
    return {"root": root, "t2m": t2m, "precip": precip}


def write_spec(directory: Path, workload: dict, **sections) -> Path:
    path = directory / "spec.yaml"
    data = {"version": 1, "name": "from-file", "workload": workload, **sections}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def load(sources: dict, **workload):
    """A sweep whose workload reads from the sources (paths relative to the spec file)."""
    spec = write_spec(sources["root"], {"field": "file", **workload})
    return load_spec(spec)


def expected(source: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The source cropped or tiled (wrapping around) to ``shape``."""
    index = np.ix_(*(np.arange(n) % m for n, m in zip(shape, source.shape, strict=True)))
    return source[index]


# --- the spec ----------------------------------------------------------------


@pytest.mark.parametrize("store", ["src.nc", "src.zarr"])
@pytest.mark.parametrize(("variable", "dtype"), [("t2m", "int16"), ("precip", "float32")])
def test_shape_and_dtype_default_to_the_files(sources, store, variable, dtype):
    workload = load(sources, path=store, variable=variable).workload
    assert workload.dims == ("time", "lat", "lon")
    assert workload.shape == (T, LAT, LON)
    assert workload.dtype == dtype
    assert workload.path == str(sources["root"] / store)
    assert workload.variable == variable
    assert workload.to_dict()["path"] == workload.path


def test_path_is_relative_to_the_spec_file_not_the_working_directory(
    sources, tmp_path, monkeypatch
):
    spec = write_spec(sources["root"], {"field": "file", "path": "src.nc", "variable": "t2m"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert Path(load_spec(spec).workload.path) == sources["root"] / "src.nc"
    monkeypatch.chdir(sources["root"])
    sweep = load_spec("spec.yaml")  # a relative spec path resolves too, to an absolute path
    assert Path(sweep.workload.path).is_absolute()
    assert Path(sweep.workload.path) == sources["root"] / "src.nc"


def test_absolute_path_and_a_path_without_a_spec_file(sources):
    absolute = str(sources["root"] / "src.zarr")
    sweep = parse_spec(
        {"version": 1, "workload": {"field": "file", "path": absolute, "variable": "t2m"}}
    )
    assert sweep.workload.path == absolute


def test_explicit_shape_names_and_dtype_win(sources):
    workload = load(
        sources,
        path="src.nc",
        variable="t2m",
        shape={"t": 12, "y": 3, "x": 20},
        dtype="float32",
    ).workload
    assert workload.dims == ("t", "y", "x")
    assert workload.shape == (12, 3, 20)
    assert workload.dtype == "float32"


def test_the_variable_changes_the_digest(sources):
    a = load(sources, path="src.nc", variable="t2m")
    b = load(sources, path="src.nc", variable="precip", dtype="int16")
    c = load(sources, path="src.nc", variable="t2m")
    assert a.digest() == c.digest()
    assert a.digest() != b.digest()


def test_a_missing_variable_is_a_spec_error_listing_the_variables(sources):
    with pytest.raises(SpecError) as info:
        load(sources, path="src.nc", variable="tas")
    assert info.value.field == "workload.path"
    for word in ("'tas'", "t2m", "precip"):
        assert word in info.value.message
    assert info.value.source == str(sources["root"] / "spec.yaml")


@pytest.mark.parametrize("path", ["missing.nc", "missing.zarr"])
def test_a_missing_file_is_a_spec_error(sources, path):
    with pytest.raises(SpecError) as info:
        load(sources, path=path, variable="t2m")
    assert info.value.field == "workload.path"
    # the reason in words, not the errno that OSError.args[0] holds
    where = sources["root"] / path
    assert info.value.message == f"cannot use {str(where)!r}: no such file or directory"


def test_a_file_xarray_cannot_open_is_a_spec_error(sources, tmp_path):
    (tmp_path / "notes.nc").write_text("not a netCDF file\n")
    spec = write_spec(tmp_path, {"field": "file", "path": "notes.nc", "variable": "t2m"})
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    assert info.value.field == "workload.path"
    assert info.value.message.endswith(": not a netCDF, HDF5 or Zarr file that xarray can open")


def test_a_directory_that_is_no_zarr_store_is_a_spec_error(tmp_path):
    (tmp_path / "plain").mkdir()
    spec = write_spec(tmp_path, {"field": "file", "path": "plain", "variable": "t2m"})
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    assert info.value.message.endswith("plain': a directory that is not a Zarr store")


@pytest.mark.parametrize(
    ("workload", "field", "words"),
    [
        ({"path": "src.nc"}, "workload.path", ("field: file",)),
        ({"variable": "t2m"}, "workload.variable", ("field: file",)),
        ({"field": "smooth", "path": "src.nc"}, "workload.path", ("field: file",)),
        ({"field": "file", "variable": "t2m"}, "workload.path", ("required",)),
        ({"field": "file", "path": "src.nc"}, "workload.variable", ("required",)),
        ({"field": "file", "path": "", "variable": "t2m"}, "workload.path", ("required",)),
        (
            {"field": "file", "path": "src.nc", "variable": "t2m", "shape": {"t": 6, "y": 5}},
            "workload.shape",
            ("rank 2", "'t2m'"),
        ),
        ({"field": "file", "path": "src.nc", "variable": "time"}, "workload.shape", ("rank 1",)),
    ],
    ids=[
        "path-without-file",
        "variable-without-file",
        "path-with-smooth",
        "no-path",
        "no-variable",
        "empty-path",
        "rank-differs",
        "one-dimensional",
    ],
)
def test_file_keys_are_checked(sources, workload, field, words):
    shape = {"shape": {"time": 4, "y": 8, "x": 8}} if "field" not in workload else {}
    spec = write_spec(sources["root"], {**shape, **workload})
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    assert info.value.field == field
    for word in words:
        assert word in info.value.message


def test_the_files_dimension_names_in_another_order_are_refused(sources):
    with pytest.raises(SpecError) as info:
        load(sources, path="src.nc", variable="t2m", shape={"lon": LON, "lat": LAT, "time": T})
    assert info.value.field == "workload.shape"


# --- the values --------------------------------------------------------------


@pytest.mark.parametrize("store", ["src.nc", "src.zarr"])
@pytest.mark.parametrize(
    "shape",
    [(T, LAT, LON), (13, 12, 16), (4, 3, 2), (T, 12, 3), (2, LAT, 15)],
    ids=["same", "tiled", "cropped", "tiled-and-cropped", "short-and-wide"],
)
def test_values_are_the_source_cropped_or_tiled(sources, store, shape):
    workload = load(
        sources,
        path=store,
        variable="t2m",
        shape=dict(zip(("time", "lat", "lon"), shape, strict=True)),
    ).workload
    data = Field(workload).slab(0, shape[0])
    assert data.dtype == np.int16
    np.testing.assert_array_equal(data, expected(sources["t2m"], shape))


def test_tiles_wrap_around_in_time_and_space(sources):
    workload = load(
        sources, path="src.nc", variable="t2m", shape={"time": 2 * T, "lat": LAT, "lon": 2 * LON}
    ).workload
    data = Field(workload).slab(0, 2 * T)
    np.testing.assert_array_equal(data[T:], data[:T])
    np.testing.assert_array_equal(data[:, :, LON:], data[:, :, :LON])
    np.testing.assert_array_equal(data[:T, :, :LON], sources["t2m"])


@pytest.mark.parametrize("store", ["src.nc", "src.zarr"])
@pytest.mark.parametrize("length", [1, 4, 5, 13])
def test_slabs_equal_numpy_indexing_of_the_source(sources, store, length):
    shape = (13, 9, 10)
    workload = load(
        sources,
        path=store,
        variable="t2m",
        shape=dict(zip(("time", "lat", "lon"), shape, strict=True)),
    ).workload
    whole = expected(sources["t2m"], shape)
    field = Field(workload)
    pieces = list(field.slabs(length))
    assert [start for start, _ in pieces] == list(range(0, 13, length))
    for start, slab in pieces:
        np.testing.assert_array_equal(slab, whole[start : start + length])
    np.testing.assert_array_equal(field.slab(7, 11), whole[7:11])


def test_float_values_with_nan_are_kept_in_a_float_dtype(sources):
    workload = load(sources, path="src.zarr", variable="precip").workload
    data = Field(workload).slab(0, T)
    assert data.dtype == np.float32
    np.testing.assert_array_equal(data, sources["precip"])  # NaN where the source has NaN


def test_a_requested_float_dtype_converts_integers_exactly(sources):
    workload = load(sources, path="src.nc", variable="t2m", dtype="float64").workload
    data = Field(workload).slab(0, T)
    assert data.dtype == np.float64
    np.testing.assert_array_equal(data, sources["t2m"].astype("float64"))


def test_int16_from_floats_with_nan_is_refused_when_the_slab_is_made(sources):
    workload = load(sources, path="src.nc", variable="precip", dtype="int16").workload
    with pytest.raises(ValueError, match=r"'precip' holds NaN, which int16 cannot store"):
        Field(workload).slab(0, T)
    np.testing.assert_array_equal(
        Field(workload).slab(0, 2), sources["precip"][:2].astype("int16")
    )  # slabs without NaN are fine


def test_values_that_do_not_fit_the_requested_integer_dtype_are_refused(tmp_path):
    big = np.full((4, 3, 3), 1e5, dtype="float32")
    xr.Dataset({"v": (("t", "y", "x"), big)}).to_netcdf(tmp_path / "big.nc")
    spec = write_spec(
        tmp_path, {"field": "file", "path": "big.nc", "variable": "v", "dtype": "int16"}
    )
    workload = load_spec(spec).workload
    with pytest.raises(ValueError, match="int16"):
        Field(workload).slab(0, 4)  # today: an array of -31072


def test_a_trial_on_floats_with_nan_as_int16_fails_with_a_clear_message(sources, tmp_path):
    sweep = load(
        sources,
        path="src.nc",
        variable="precip",
        dtype="int16",
    )
    plan = make_plan(sweep)
    task = TrialTask(plan.trials[0], sweep.workload, sweep.read, sweep.measure, str(tmp_path))
    result = run_trial(task)
    assert result.status == "failed"
    assert "'precip' holds NaN, which int16 cannot store" in result.error
    assert "float32" in result.error
    assert list(tmp_path.iterdir()) == [], "scratch is cleaned up"


# --- end to end --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("store", ["src.nc", "src.zarr"])
def test_iotune_run_on_a_users_file(sources, store, tmp_path):
    workload = {
        "field": "file",
        "path": os.path.relpath(sources["root"] / store, tmp_path),  # '../..'
        "variable": "t2m",
        "shape": {"time": 12, "lat": 40, "lon": 32},
    }
    spec = write_spec(
        tmp_path,
        workload,
        # h5py's worker imports netCDF4 to read a netCDF source, and its blosc still works
        backend=["netcdf4", "zarr", "h5py"],
        parameters={"chunks": [4, 20, 16], "codec": ["zlib", "blosc-lz4"]},
        read={"patterns": ["full", "spatial", "timeseries"]},
        measure={"repeats": 1},
    )
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 ok" in proc.stdout
    with xr.open_dataset(out / "results.nc") as ds:
        assert set(ds["status"].values.ravel()) == {"ok"}  # ok includes the full-read crc32c
        assert list(ds["backend"].values) == ["netcdf4", "zarr", "h5py"]
        nbytes = 12 * 40 * 32 * 2
        assert (ds["read_bytes"].sel(pattern="full") == nbytes).all()
        assert (ds["ratio"] > 1).all()
        workload = yaml.safe_load(ds.attrs["spec"])["workload"]
        assert workload["variable"] == "t2m"
