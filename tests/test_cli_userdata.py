"""The user's function sees the user's dataset, through the command line (issue 41).

A CF file of the user's (times in days of a ``noleap`` calendar, latitudes and
longitudes, a packed int16 variable with a fill value) is the workload; the
function selects a box by coordinates and resamples by month, as code written
for the file does.  On netCDF4, h5py and Zarr every trial gives the answer
the same function gives on the file opened with xarray.  A function that
raises names its own file and line; a generated workload's dimensions have
index coordinates.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from iotune.measuring import sameanswer

pytestmark = pytest.mark.slow

ANALYSIS = '''
"""My analysis, written for my file."""


def box_months(ds):
    box = ds["tas"].sel(lat=slice(20, 40), lon=slice(60, 100))
    return box.resample(time="1MS").mean()


def months_by_step(ds):
    return ds["data"].resample(time="1MS").mean()
'''


def write_source(path: Path) -> None:
    """tas(time, lat, lon): 4 months of a noleap calendar, packed in int16 with a fill value."""
    nt, ny, nx = 120, 18, 36
    rng = np.random.default_rng(1)
    packed = rng.integers(-3000, 3000, (nt, ny, nx)).astype("int16")
    packed[5, 12, 8] = -32767  # one missing value, inside the box
    attrs = {"units": "K", "scale_factor": 0.01, "add_offset": 280.0}
    attrs["_FillValue"] = np.int16(-32767)
    time_attrs = {"units": "days since 2000-01-01", "calendar": "noleap"}
    xr.Dataset(
        {"tas": (("time", "lat", "lon"), packed, attrs)},
        coords={
            "time": ("time", np.arange(nt) + 0.5, time_attrs),
            "lat": ("lat", np.linspace(-85, 85, ny), {"units": "degrees_north"}),
            "lon": ("lon", np.arange(nx) * 10.0 + 5, {"units": "degrees_east"}),
        },
        attrs={"Conventions": "CF-1.8"},
    ).to_netcdf(path)


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)


def write_spec(
    folder: Path, workload: dict, pattern: dict, backends: list[str], chunks: list[int]
) -> Path:
    spec = {
        "version": 1,
        "name": "userdata",
        "workload": workload,
        "backend": backends,
        "parameters": {"chunks": [chunks]},
        "read": {"patterns": [pattern]},
        "measure": {"repeats": 1, "noise_probes": 0},
    }
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def test_every_layout_answers_as_the_function_on_the_file(tmp_path: Path) -> None:
    write_source(tmp_path / "tas.nc")
    (tmp_path / "my_analysis.py").write_text(ANALYSIS)
    workload = {"field": "file", "path": "tas.nc", "variable": "tas"}
    pattern = {"name": "box", "call": "my_analysis:box_months"}
    spec = write_spec(tmp_path, workload, pattern, ["netcdf4", "h5py", "zarr"], [30, 9, 18])
    proc = iotune("run", spec, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ds = xr.open_dataset(tmp_path / "out" / "results.nc")
    assert set(np.unique(ds["status"].values)) == {"ok"}, ds["error"].values
    assert ds["status"].size == 3
    ds.close()
    # the answer every layout matched is the function's on the file, as xarray opens it
    sys.path.insert(0, str(tmp_path))
    try:
        from my_analysis import box_months  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    with xr.open_dataset(tmp_path / "tas.nc") as source:
        expected = box_months(source)
    assert expected.sizes == {"time": 4, "lat": 2, "lon": 4}  # 25 and 35 N; 65..95 E
    assert expected["time"].values[0].calendar == "noleap"
    assert np.isnan(expected.values).sum() == 0  # the missing value is averaged over
    (saved,) = (tmp_path / "out" / "references").glob("box-*.pkl")
    result = pickle.loads(saved.read_bytes())["result"]
    want = sameanswer.flatten(expected)
    assert result.keys() == want.keys()
    for key, values in want.items():
        if values.dtype.kind == "f":
            np.testing.assert_allclose(result[key], values, rtol=1e-12)
        else:
            np.testing.assert_array_equal(result[key], values)


def test_an_error_names_the_users_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "my_analysis.py").write_text(ANALYSIS)
    workload = {"shape": {"time": 60, "y": 4, "x": 4}}  # generated: times are steps 0..59
    pattern = {"name": "months", "call": "my_analysis:months_by_step"}
    spec = write_spec(tmp_path, workload, pattern, ["netcdf4"], [30, 4, 4])
    proc = iotune("run", spec, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "Only valid with DatetimeIndex" in proc.stderr
    assert proc.stderr.rstrip().endswith("(my_analysis.py:11)"), proc.stderr
