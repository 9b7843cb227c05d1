"""The virtual backend: a user's netCDF4 files read in place through VirtualiZarr references.

Real netCDF4 files (one, and a collection of ten along ``time``) are referenced in each
form; a trial builds the references, reads every pattern through them and checks the
full read against the source's values.  The references hold no data (unless inlined),
point at the source's files, and those files are evicted before a cold read.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from iotune.backends.virtual.backend import VirtualBackend
from iotune.core.errors import NotApplicable, UsageError
from iotune.model.records import TrialTask
from iotune.runner.plan import make_plan
from iotune.runner.trial import run_trial
from iotune.specfile.parse import load_spec

if os.environ.get("IOTUNE_REQUIRE_VIRTUAL") != "1":  # CI: the virtual extra, so a failure
    pytest.importorskip("virtualizarr")

FILES, STEPS, NY, NX = 10, 4, 6, 8
FORMS = ("kerchunk-json", "kerchunk-parquet", "icechunk")


def write_file(path: Path, first: int, *, chunks: tuple[int, ...] = (2, 3, 8)) -> np.ndarray:
    """``tas(time, lat, lon)``, float32, zlib and shuffle, days since 2000 from ``first``."""
    values = np.random.default_rng(first).normal(280, 10, (STEPS, NY, NX)).astype("float32")
    xr.Dataset(
        {"tas": (("time", "lat", "lon"), values, {"units": "K"})},
        coords={
            "time": ("time", np.arange(first, first + STEPS), {"units": "days since 2000-01-01"}),
            "lat": np.linspace(-50, 50, NY),
            "lon": np.arange(NX) * 45.0,
        },
    ).to_netcdf(path, encoding={"tas": {"zlib": True, "shuffle": True, "chunksizes": chunks}})
    return values


@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> dict:
    """Ten netCDF4 files of four steps each, and one file alone."""
    root = tmp_path_factory.mktemp("collection")
    (root / "many").mkdir()
    parts = [write_file(root / "many" / f"tas_{i:02d}.nc", i * STEPS) for i in range(FILES)]
    one = write_file(root / "one.nc", 0)
    return {"root": root, "many": np.concatenate(parts), "one": one}


def sweep_of(root: Path, path: str, **parameters):
    spec = {
        "version": 1,
        "name": "virtual",
        "workload": {"field": "file", "path": path, "variable": "tas"},
        "backend": "virtual",
        "parameters": parameters,
        "read": {"patterns": ["full", "timeseries", "spatial"]},
        "measure": {"repeats": 1, "noise_probes": 0},
    }
    file = root / f"spec-{abs(hash((path, str(parameters))))}.yaml"
    file.write_text(yaml.safe_dump(spec, sort_keys=False))
    return load_spec(file)


def run_one(sweep, scratch: Path, backend: str = "virtual"):
    plan = make_plan(sweep)
    (trial,) = [t for t in plan.trials if t.backend == backend]
    task = TrialTask(trial, sweep.workload, sweep.read, sweep.measure, str(scratch))
    return run_trial(task)


@pytest.mark.parametrize("form", FORMS)
def test_each_form_reads_the_collection_as_its_files_hold_it(
    collection: dict, tmp_path: Path, form: str
) -> None:
    sweep = sweep_of(collection["root"], "many/tas_*.nc", reference=form)
    assert sweep.workload.shape == (FILES * STEPS, NY, NX)
    result = run_one(sweep, tmp_path)
    assert result.status == "ok", result.error
    # the full read matched the source's checksum; the stored size is the references'
    stored = result.stored
    assert result.file_bytes == stored["references_bytes"]
    source = sum(p.stat().st_size for p in (collection["root"] / "many").glob("*.nc"))
    assert result.file_bytes < source / 4
    assert stored["reference"] == form and stored["source_files"] == FILES
    assert stored["files_referenced"] == FILES
    assert stored["chunks_referenced"] >= FILES * 4  # 2 x 2 chunks of each file
    assert {"full", "timeseries", "spatial"} <= result.reads.keys()
    assert all(r[0]["cache"] == "cold" for r in result.reads.values())
    assert list(tmp_path.iterdir()) == [], "the references are removed, the source stays"
    assert len(list((collection["root"] / "many").glob("*.nc"))) == FILES


@pytest.mark.parametrize("form", FORMS)
def test_reads_through_the_references_give_the_source_values(
    collection: dict, tmp_path: Path, form: str
) -> None:
    sweep = sweep_of(collection["root"], "one.nc", reference=form)
    plan = make_plan(sweep)
    params = plan.trials[0].params
    backend = VirtualBackend()
    refs = tmp_path / "r.refs"
    writer = backend.open_writer(refs, sweep.workload, params)
    writer.close()
    assert backend.verify(refs, params)["files_referenced"] == 1
    reader = backend.open_reader(refs, sweep.workload, params)
    try:
        np.testing.assert_array_equal(reader.read((slice(1, 3),)), collection["one"][1:3])
    finally:
        reader.close()
    with backend.open_dataset(refs, params, chunks="storage", workload=sweep.workload) as ds:
        assert ds["data"].dims == ("time", "lat", "lon")
        np.testing.assert_array_equal(ds["data"].values, collection["one"])
    # a cold read evicts the source file as well as the references, also in a process
    # that did not build them (a concurrent reader's), which finds it in the references
    source = (collection["root"] / "one.nc").resolve()
    assert source in backend.paths(refs) and source in VirtualBackend().paths(refs)
    assert backend.stored_bytes(refs) < sum(p.stat().st_size for p in backend.paths(refs))


def test_the_inline_threshold_copies_small_chunks_into_kerchunk_references(
    collection: dict, tmp_path: Path
) -> None:
    kept = run_one(sweep_of(collection["root"], "one.nc", inline_threshold=0), tmp_path)
    inlined = run_one(sweep_of(collection["root"], "one.nc", inline_threshold="64KiB"), tmp_path)
    assert kept.status == inlined.status == "ok", (kept.error, inlined.error)
    assert kept.stored["chunks_inlined"] == 0 and kept.stored["chunks_referenced"] == 4
    assert inlined.stored["chunks_inlined"] == 4 and inlined.stored["chunks_referenced"] == 0
    assert inlined.file_bytes > kept.file_bytes  # the chunks' bytes, base64


def test_icechunk_has_no_inline_threshold(collection: dict) -> None:
    sweep = sweep_of(collection["root"], "one.nc")
    effective, notes = VirtualBackend.resolve(
        {"reference": "icechunk", "inline_threshold": 4096}, sweep.workload
    )
    assert effective["inline_threshold"] is None
    assert notes == ["inline_threshold applies only to kerchunk references"]


def test_a_cropped_workload_is_not_applicable(collection: dict, tmp_path: Path) -> None:
    root = collection["root"]
    spec = root / "cropped.yaml"
    workload = {"field": "file", "path": "one.nc", "variable": "tas"}
    workload["shape"] = {"time": 2, "lat": NY, "lon": NX}
    data = {"version": 1, "name": "c", "workload": workload}
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(NotApplicable, match=r"as the source holds it, shape \(4, 6, 8\)"):
        VirtualBackend.resolve({}, load_spec(spec).workload)


def test_a_netcdf3_file_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "old.nc"
    xr.Dataset({"tas": (("time", "x"), np.ones((4, 5), "f4"))}).to_netcdf(
        path, format="NETCDF3_64BIT"
    )
    sweep = sweep_of(tmp_path, "old.nc")
    with pytest.raises(UsageError) as err:
        VirtualBackend.check_workload(sweep.workload)
    message = str(err.value)
    assert "\n" not in message and str(path) in message
    assert "not an HDF5 file" in message and "netCDF3" in message


def test_a_filter_with_no_zarr_codec_is_refused_in_one_line(tmp_path: Path) -> None:
    import h5py

    path = tmp_path / "lzf.nc"
    with h5py.File(path, "w") as f:
        f.create_dataset("tas", data=np.ones((4, 5), "f4"), compression="lzf")
        f["tas"].dims[0].label = "time"
    sweep = sweep_of(tmp_path, "lzf.nc")
    with pytest.raises(UsageError) as err:
        VirtualBackend.check_workload(sweep.workload)
    message = str(err.value)
    assert "\n" not in message and "lzf" in message and "has no Zarr codec" in message


def test_a_generated_workload_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "gen.yaml"
    workload = {"shape": {"time": 4, "x": 4}}
    spec.write_text(yaml.safe_dump({"version": 1, "name": "g", "workload": workload}))
    with pytest.raises(UsageError, match=r"workload.field: 'smooth' with backend virtual"):
        VirtualBackend.check_workload(load_spec(spec).workload)


@pytest.mark.parametrize(
    "settings",
    [
        {"reference": "kerchunk-json", "inline_threshold": 65536, "dask_chunks": "storage"},
        {"reference": "kerchunk-parquet", "inline_threshold": 0},
        {"reference": "icechunk", "dask_chunks": "time=2"},
    ],
    ids=lambda s: s["reference"],
)
def test_the_pasted_code_builds_the_references_and_reads_the_source(
    collection: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: dict
) -> None:
    from iotune.backends.exports_base import Target

    target = Target("tas", ("time", "lat", "lon"), (FILES * STEPS, NY, NX), "float32")
    (export,) = VirtualBackend.exports(settings, target).values()
    monkeypatch.chdir(tmp_path)
    scope = {"SOURCE": str(collection["root"] / "many" / "tas_*.nc")}
    exec(compile(export["text"], "export", "exec"), scope)  # the code as a user pastes it
    np.testing.assert_array_equal(scope["tas"].values, collection["many"])
    assert (scope["tas"].chunks is None) == ("dask_chunks" not in settings)
