"""The inplace backend: a user's netCDF4 files read as they are, with xarray, nothing written.

Real netCDF4 files (one, and a collection of three along ``time``); a trial "writes"
nothing, reads every pattern from the source files themselves through each engine and
checks the full read against the source's values; the files are evicted before a cold
read, and the pasted xarray call reads the same values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from iotune.backends.exports_base import Target
from iotune.backends.inplace.backend import InplaceBackend
from iotune.core.errors import NotApplicable, UsageError
from iotune.model.records import TrialTask
from iotune.runner.plan import make_plan
from iotune.runner.trial import run_trial
from iotune.specfile.parse import load_spec

FILES, STEPS, NY, NX = 3, 4, 6, 8


def write_file(path: Path, first: int, **options) -> np.ndarray:
    """``tas(time, lat, lon)``, float32, zlib chunks of 2x3x8, days since 2000 from ``first``."""
    values = np.random.default_rng(first).normal(280, 10, (STEPS, NY, NX)).astype("float32")
    encoding = {"tas": {"zlib": True, "chunksizes": (2, 3, 8)}} if not options else {}
    xr.Dataset(
        {"tas": (("time", "lat", "lon"), values, {"units": "K"})},
        coords={
            "time": ("time", np.arange(first, first + STEPS), {"units": "days since 2000-01-01"}),
            "lat": np.linspace(-50, 50, NY),
            "lon": np.arange(NX) * 45.0,
        },
    ).to_netcdf(path, encoding=encoding, **options)
    return values


@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> dict:
    """Three netCDF4 files of four steps each, and one file alone."""
    root = tmp_path_factory.mktemp("inplace")
    (root / "many").mkdir()
    parts = [write_file(root / "many" / f"tas_{i}.nc", i * STEPS) for i in range(FILES)]
    one = write_file(root / "one.nc", 0)
    return {"root": root, "many": np.concatenate(parts), "one": one}


def sweep_of(root: Path, path: str, **parameters):
    spec = {
        "version": 1,
        "name": "inplace",
        "workload": {"field": "file", "path": path, "variable": "tas"},
        "backend": "inplace",
        "parameters": parameters,
        "read": {"patterns": ["full", "timeseries", "spatial"]},
        "measure": {"repeats": 1, "noise_probes": 0},
    }
    file = root / f"spec-{abs(hash((path, str(parameters))))}.yaml"
    file.write_text(yaml.safe_dump(spec, sort_keys=False))
    return load_spec(file)


def run_one(sweep, scratch: Path):
    (trial,) = make_plan(sweep).trials
    return run_trial(TrialTask(trial, sweep.workload, sweep.read, sweep.measure, str(scratch)))


@pytest.mark.parametrize(
    ("path", "engine", "dask"),
    [("many/tas_*.nc", "netcdf4", None), ("one.nc", "h5netcdf", "storage")],
)
def test_a_trial_reads_the_source_itself_and_writes_nothing(
    collection: dict, tmp_path: Path, path: str, engine: str, dask: str | None
) -> None:
    parameters = {"engine": engine} | ({"dask_chunks": dask} if dask else {})
    result = run_one(sweep_of(collection["root"], path, **parameters), tmp_path)
    assert result.status == "ok", result.error
    # the full read matched the source's checksum; the stored size is the source's own
    sources = sorted(collection["root"].glob(path))
    assert result.file_bytes == sum(p.stat().st_size for p in sources)
    stored = result.stored
    assert stored["engine"] == engine and stored["source_files"] == len(sources)
    assert stored["source_chunks"] == [2, 3, 8] and stored["source_compression"] != "none"
    assert stored["written_bytes"] == 0
    assert {"full", "timeseries", "spatial"} <= result.reads.keys()
    assert all(r[0]["cache"] == "cold" for r in result.reads.values())
    assert result.write[0]["s"] < 0.05  # a writer that stores nothing
    assert list(tmp_path.iterdir()) == [], "nothing was written to scratch"


def test_the_reader_and_the_dataset_give_the_source_values(
    collection: dict, tmp_path: Path
) -> None:
    sweep = sweep_of(collection["root"], "many/tas_*.nc")
    params = make_plan(sweep).trials[0].params
    backend = InplaceBackend()
    made = tmp_path / "nothing.none"
    backend.open_writer(made, sweep.workload, params).close()
    assert not made.exists()
    reader = backend.open_reader(made, sweep.workload, params)
    try:
        np.testing.assert_array_equal(reader.read((slice(3, 9),)), collection["many"][3:9])
    finally:
        reader.close()
    with backend.open_dataset(made, params, chunks="storage", workload=sweep.workload) as ds:
        assert ds["data"].dims == ("time", "lat", "lon")
        np.testing.assert_array_equal(ds["data"].values, collection["many"])
    # a cold read evicts the source files, the only ones a read opens
    assert backend.paths(made) == sorted((collection["root"] / "many").resolve().glob("*.nc"))


@pytest.mark.parametrize(
    "settings",
    [{"engine": "netcdf4"}, {"engine": "h5netcdf", "dask_chunks": "time=2"}],
    ids=lambda s: s["engine"],
)
@pytest.mark.parametrize("source", ["one.nc", "many/tas_*.nc"])
def test_the_pasted_code_reads_the_source(collection: dict, settings: dict, source: str) -> None:
    shape = (STEPS if source == "one.nc" else FILES * STEPS, NY, NX)
    target = Target("tas", ("time", "lat", "lon"), shape, "float32")
    (export,) = InplaceBackend.exports(settings, target).values()
    scope = {"SOURCE": str(collection["root"] / source)}
    exec(compile(export["text"], "export", "exec"), scope)  # the code as a user pastes it
    expected = collection["one" if source == "one.nc" else "many"]
    np.testing.assert_array_equal(scope["tas"].values, expected)
    assert f"engine={settings['engine']!r}" in export["text"]
    dask = "dask_chunks" in settings or source != "one.nc"  # open_mfdataset: always dask
    assert (scope["tas"].chunks is not None) == dask


def test_h5netcdf_cannot_read_a_netcdf3_file(tmp_path: Path) -> None:
    write_file(tmp_path / "old.nc", 0, format="NETCDF3_64BIT")
    sweep = sweep_of(tmp_path, "old.nc")
    with pytest.raises(NotApplicable, match=r"engine h5netcdf reads HDF5 files only"):
        InplaceBackend.resolve({"engine": "h5netcdf"}, sweep.workload)
    assert InplaceBackend.resolve({"engine": "netcdf4"}, sweep.workload)[0]["engine"] == "netcdf4"


def test_a_generated_workload_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "gen.yaml"
    workload = {"shape": {"time": 4, "x": 4}}
    spec.write_text(yaml.safe_dump({"version": 1, "name": "g", "workload": workload}))
    with pytest.raises(UsageError, match=r"workload.field: 'smooth' with backend inplace"):
        InplaceBackend.check_workload(load_spec(spec).workload)
