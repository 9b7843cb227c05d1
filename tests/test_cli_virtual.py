"""``iotune run`` reading a collection of netCDF4 files in place through virtual references.

Ten CF files (packed int16 with a fill value, times in days) are one dataset along
``time``; a sweep measures netCDF4 (the data rewritten) beside the virtual backend in
two reference forms and inline thresholds.  Every trial's full read matches the
source's values and the user's function gives the answer it gives on the files opened
with xarray; the knobs are the results' coordinates.  A file VirtualiZarr cannot
reference is refused before anything is made.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

pytestmark = pytest.mark.slow
pytest.importorskip("virtualizarr")

ANALYSIS = """
def box_mean(ds):
    return ds["tas"].sel(lat=slice(-20, 20)).mean("lon")
"""


def write_collection(folder: Path, files: int = 10, steps: int = 3) -> None:
    folder.mkdir()
    rng = np.random.default_rng(7)
    for i in range(files):
        packed = rng.integers(-3000, 3000, (steps, 6, 8)).astype("int16")
        packed[0, 2, 3] = -32767
        attrs = {"units": "K", "scale_factor": 0.01, "add_offset": 280.0}
        days = {"units": "days since 2000-01-01", "calendar": "noleap"}
        xr.Dataset(
            {"tas": (("time", "lat", "lon"), packed, attrs)},
            coords={
                "time": ("time", np.arange(i * steps, (i + 1) * steps) + 0.5, days),
                "lat": np.linspace(-50, 50, 6),
                "lon": np.arange(8) * 45.0,
            },
        ).to_netcdf(
            folder / f"tas_{i:02d}.nc",
            encoding={
                "tas": {"zlib": True, "chunksizes": (1, 6, 8), "_FillValue": np.int16(-32767)},
            },
        )


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)


def write_spec(folder: Path, path: str, backends: list[str], parameters: dict) -> Path:
    spec = {
        "version": 1,
        "name": "in-place",
        "workload": {"field": "file", "path": path, "variable": "tas"},
        "backend": backends,
        "parameters": parameters,
        "read": {"patterns": ["full", {"name": "box", "call": "analysis:box_mean"}]},
        "measure": {"repeats": 1, "noise_probes": 0},
    }
    file = folder / "spec.yaml"
    file.write_text(yaml.safe_dump(spec, sort_keys=False))
    return file


def test_a_collection_is_read_in_place_in_every_form(tmp_path: Path) -> None:
    write_collection(tmp_path / "archive")
    (tmp_path / "analysis.py").write_text(ANALYSIS)
    parameters = {
        "reference": ["kerchunk-json", "icechunk"],  # kerchunk-parquet: tests/backends
        "inline_threshold": [0, "64KiB"],
    }
    spec = write_spec(tmp_path, "archive/tas_*.nc", ["netcdf4", "virtual"], parameters)
    proc = iotune("run", spec, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARN" not in proc.stderr  # Icechunk's log stays quiet
    with xr.open_dataset(tmp_path / "out" / "results.nc") as ds:
        assert list(ds["reference"].values) == parameters["reference"]
        assert list(ds["inline_threshold"].values) == [0, 65536]
        virtual = ds.sel(backend="virtual")
        measured = virtual["status"].values == "ok"
        # icechunk inlines nothing: its two thresholds are one trial
        assert measured.sum() == 3, virtual["error"].values
        assert list(ds.sel(backend="netcdf4")["status"].values.ravel()).count("ok") == 1
        props = json.loads(str(virtual["file_properties"].sel(reference="icechunk")[0].values))
        assert props["reference"] == "icechunk" and props["files_referenced"] == 10
        inlined = virtual["file_properties"].sel(reference="kerchunk-json", inline_threshold=65536)
        assert json.loads(str(inlined.values))["chunks_inlined"] == 30
        sizes = virtual["file_bytes"].sel(reference="kerchunk-json").values
        assert sizes[1] > sizes[0]  # the inlined chunks' bytes are in the references
        caches = {str(c) for c in virtual["read_cache"].values.ravel()} - {"", "nan"}
        assert caches == {"cold"}  # the references and the source files evicted
    # the function's answer every trial matched is the one it gives on the files
    sys.path.insert(0, str(tmp_path))
    try:
        from analysis import box_mean  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    with xr.open_mfdataset(sorted((tmp_path / "archive").glob("*.nc"))) as source:
        expected = box_mean(source).load()
    assert expected.sizes == {"time": 30, "lat": 2}
    assert np.isnan(expected.values).sum() == 0


def test_a_netcdf3_collection_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    xr.Dataset({"tas": (("time", "x"), np.ones((4, 5), "f4"))}).to_netcdf(
        tmp_path / "old.nc", format="NETCDF3_64BIT"
    )
    (tmp_path / "analysis.py").write_text(ANALYSIS)
    spec = write_spec(tmp_path, "old.nc", ["virtual"], {})
    proc = iotune("run", spec, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "cannot reference" in proc.stderr and "not an HDF5 file" in proc.stderr
    assert not (tmp_path / "out").exists()
