"""Each format's stored array opens through xarray as its users open it: dims, values, chunks."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iotune.backends import get_backend, opens_with_xarray
from iotune.backends.base import SlabBackend
from iotune.backends.exports_base import Target
from iotune.backends.xarray_exports import PATHS
from iotune.backends.xarray_open import (
    chunks_from_label,
    dask_chunks,
    split_dims,
    stored_chunks,
    traffic,
)
from iotune.core.errors import UsageError
from iotune.measuring.data import Field
from iotune.model.spec import StorageSpec, Workload
from tests.objectstore.conftest import Server

WORKLOAD = Workload(("time", "y", "x"), (12, 8, 6), "int16")
CHUNKS = "4x4x6"
LOCAL = ("netcdf4", "h5py", "zarr")


def _written(backend: SlabBackend, path: Path, params: dict[str, Any]) -> np.ndarray:
    """Write the workload with ``params``; return the values written."""
    data = np.concatenate([slab for _, slab in Field(WORKLOAD).slabs(4)])
    writer = backend.open_writer(path, WORKLOAD, params)
    writer.write(0, data)
    writer.close()
    backend.verify(path, params)
    return data


def _local(name: str, tmp_path: Path, **knobs: Any) -> tuple[SlabBackend, Path, dict, np.ndarray]:
    cls = get_backend(name)
    params, _ = cls.resolve({"chunks": CHUNKS} | knobs, WORKLOAD)
    backend = cls()
    assert isinstance(backend, SlabBackend)
    path = tmp_path / f"data{cls.suffix}"
    return backend, path, params, _written(backend, path, params)


@pytest.mark.parametrize("name", LOCAL)
def test_each_format_round_trips_with_the_workload_dims(tmp_path: Path, name: str) -> None:
    backend, path, params, data = _local(name, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no phony dims, no consolidated-metadata fallback
        ds = backend.open_dataset(path, params, chunks=None)
    try:
        assert tuple(ds["data"].dims) == WORKLOAD.dims
        assert list(ds.data_vars) == ["data"]  # the dimension scales are not variables
        assert ds["data"].chunks is None  # chunks None: no dask
        assert ds["data"].dtype == WORKLOAD.dtype  # no fill value turned into a mask
        np.testing.assert_array_equal(ds["data"].values, data)
        assert stored_chunks(ds) == {"time": 4, "y": 4, "x": 6}
    finally:
        ds.close()


@pytest.mark.parametrize("name", LOCAL)
def test_storage_chunks_are_the_stored_ones_and_a_dict_splits_them(tmp_path: Path, name: str):
    backend, path, params, data = _local(name, tmp_path)
    ds = backend.open_dataset(path, params, chunks="storage")
    assert dask_chunks(ds) == {"time": 4, "y": 4, "x": 6}
    assert split_dims(ds) == []
    np.testing.assert_array_equal(ds["data"].sel(time=slice(2, 9)).compute().values, data[2:9])
    ds.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # xarray's own "separate the stored chunks"
        ds = backend.open_dataset(path, params, chunks={"time": 3})
    assert dask_chunks(ds) == {"time": 3, "y": 4, "x": 6}
    assert split_dims(ds) == ["time"]
    np.testing.assert_array_equal(ds["data"].values, data)
    ds.close()
    ds = backend.open_dataset(path, params, chunks={"time": 8, "y": 8})  # multiples: aligned
    assert split_dims(ds) == []
    ds.close()


def test_h5py_opens_with_its_chunk_cache_and_without_the_workload(tmp_path: Path) -> None:
    backend, path, params, data = _local("h5py", tmp_path, chunk_cache=2**20)
    ds = backend.open_dataset(path, params, chunks="auto")
    np.testing.assert_array_equal(ds["data"].values, data)
    ds.close()


def test_netcdf4_restores_the_default_chunk_cache_on_close(tmp_path: Path) -> None:
    import netCDF4

    before = netCDF4.get_chunk_cache()
    backend, path, params, data = _local("netcdf4", tmp_path, chunk_cache=3 * 2**20)
    ds = backend.open_dataset(path, params, chunks=None)
    assert netCDF4.get_chunk_cache()[0] == 3 * 2**20
    np.testing.assert_array_equal(ds["data"].values, data)
    ds.close()
    assert netCDF4.get_chunk_cache() == before


@pytest.mark.parametrize("name", ["posix", "memory"])
def test_formats_xarray_cannot_open_say_so(tmp_path: Path, name: str) -> None:
    backend = get_backend(name)()
    assert isinstance(backend, SlabBackend)
    assert not opens_with_xarray(name)
    with pytest.raises(UsageError, match=f"format {name} cannot be opened with xarray"):
        backend.open_dataset(tmp_path / "x", {}, chunks=None)


def test_which_backends_open_with_xarray() -> None:
    assert [n for n in ("netcdf4", "h5py", "zarr", "mpiio") if opens_with_xarray(n)] == list(LOCAL)


def test_a_bad_chunks_value_is_refused(tmp_path: Path) -> None:
    backend, path, params, _ = _local("zarr", tmp_path)
    for bad in ("tiny", {"time": 0}, {"time": "24"}):
        with pytest.raises(UsageError, match="expected none, auto, storage or a mapping"):
            backend.open_dataset(path, params, chunks=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "knobs"),
    [
        ("zarr-object", {"client": "obstore"}),
        ("zarr-object", {"client": "fsspec", "consolidated": "on"}),
        ("zarr-object", {"client": "obstore", "consolidated": "on"}),
        ("zarr-object", {"client": "fsspec"}),
        ("hdf5-object", {"cache_type": "none", "read_block_size": 65536}),
        ("netcdf4-object", {}),
    ],
)
def test_object_store_formats_open_with_their_client(
    tmp_path: Path, s3_server: Server, bucket: str, name: str, knobs: dict
) -> None:
    cls = get_backend(name)
    params, _ = cls.resolve({"chunks": CHUNKS} | knobs, WORKLOAD)
    backend = cls()
    backend.bind(StorageSpec(f"s3://{bucket}/xr", s3_server.endpoint, "us-east-1"), tmp_path)
    path = tmp_path / "trial-1" / f"r0{cls.suffix}"
    path.parent.mkdir()
    data = _written(backend, path, params)
    ds = backend.open_dataset(path, params, chunks="storage")
    try:
        assert tuple(ds["data"].dims) == WORKLOAD.dims
        np.testing.assert_array_equal(ds["data"].values, data)
        assert split_dims(ds) == []
        sent = traffic(ds)
        assert sent is not None and sent["requests"]["GET"] >= 1
    finally:
        ds.close()
    backend.remove(path)


# --- the knobs and the export ---------------------------------------------------------

TARGET = Target("data", WORKLOAD.dims, WORKLOAD.shape, WORKLOAD.dtype)


@pytest.mark.parametrize("name", LOCAL)
@pytest.mark.parametrize("label", ["storage", "time=3", "none"])
def test_the_exported_open_line_opens_the_file_as_measured(
    tmp_path: Path, name: str, label: str
) -> None:
    backend, path, params, data = _local(name, tmp_path, dask_chunks=label, dask_threads=2)
    assert params["dask_chunks"] == label
    assert params["dask_threads"] == (None if label == "none" else 2)
    import dask

    export = backend.exports({"backend": name, **params}, TARGET)["xarray_open"]
    text = export["text"].replace(repr(PATHS[export["value"]["engine"]]), repr(str(path)))
    scope: dict[str, Any] = {}
    # the pasted dask.config.set holds for the process: these keys are restored after
    with warnings.catch_warnings(), dask.config.set(scheduler=None, num_workers=None):
        warnings.simplefilter("ignore")  # the split chunks' warning
        measured = backend.open_dataset(path, params, chunks=chunks_from_label(label))
        exec(text, scope)  # what a user pastes
        assert dask.config.get("num_workers") == params["dask_threads"]
    pasted = scope["ds"]
    try:
        assert pasted["data"].chunks == measured["data"].chunks
        np.testing.assert_array_equal(pasted["data"].values, data)
    finally:
        pasted.close()
        measured.close()


def test_a_point_read_by_the_library_has_no_open_line() -> None:
    cls = get_backend("zarr")
    params, _ = cls.resolve({"chunks": CHUNKS}, WORKLOAD)
    assert "xarray_open" not in cls.exports({"backend": "zarr", **params}, TARGET)


def test_object_store_reads_carry_the_dask_chunks() -> None:
    cls = get_backend("zarr-object")
    params, _ = cls.resolve({"chunks": CHUNKS, "dask_chunks": "storage"}, WORKLOAD)
    text = cls.exports({"backend": "zarr-object", **params}, TARGET)["zarr_object_read"]["text"]
    assert "chunks={'time': 4, 'y': 4, 'x': 6})" in text
    cls = get_backend("hdf5-object")
    params, _ = cls.resolve({"chunks": CHUNKS, "dask_chunks": "auto"}, WORKLOAD)
    text = cls.exports({"backend": "hdf5-object", **params}, TARGET)["hdf5_object_xarray"]["text"]
    assert "engine='h5netcdf', chunks='auto')" in text


def test_dask_threads_apply_only_with_dask_chunks() -> None:
    cls = get_backend("netcdf4")
    effective, notes = cls.resolve({"chunks": CHUNKS, "dask_threads": 2}, WORKLOAD)
    assert "dask_threads" not in effective and "dask_chunks" not in effective
    assert notes == ["dask_threads applies only with dask_chunks other than none"]
    effective, notes = cls.resolve({"dask_chunks": "none", "dask_threads": 2}, WORKLOAD)
    assert effective["dask_chunks"] == "none" and effective["dask_threads"] is None
    effective, notes = cls.resolve({"dask_chunks": "auto", "dask_threads": 2}, WORKLOAD)
    assert effective["dask_threads"] == 2 and notes == []


def test_a_grid_over_dask_knobs_measures_each_read_once() -> None:
    from iotune.runner.plan import make_plan
    from iotune.specfile.parse import load_spec_text

    sweep = load_spec_text(
        "version: 1\nworkload: {shape: {time: 8, y: 16, x: 16}}\nbackend: [zarr, posix]\n"
        "parameters: {dask_chunks: [none, {time: 4}], dask_threads: [1, 2]}\n"
    )
    plan = make_plan(sweep)
    zarr = [t for t in plan.trials if t.backend == "zarr"]
    # none x (1, 2) is one trial (threads do not apply), time=4 x (1, 2) two
    assert sorted((t.params["dask_chunks"], t.params["dask_threads"]) for t in zarr) == [
        ("none", None),
        ("time=4", 1),
        ("time=4", 2),
    ]
    posix = [t for t in plan.trials if t.backend == "posix"]
    assert len(posix) == 1 and "dask_chunks" not in posix[0].params  # does not apply


@pytest.mark.parametrize("name", ["zarr-object", "hdf5-object"])
def test_a_trial_on_an_object_store_reads_through_xarray_cold_and_metered(
    tmp_path: Path, s3_server: Server, bucket: str, name: str
) -> None:
    from iotune.model.records import TrialResult, TrialTask
    from iotune.model.spec import MeasureSpec
    from iotune.runner import placed, steps
    from iotune.runner.plan import make_plan
    from iotune.specfile.parse import load_spec_text

    sweep = load_spec_text(
        f"version: 1\nworkload: {{shape: {{time: 12, y: 8, x: 6}}}}\nbackend: {name}\n"
        f"storage: {{url: 's3://{bucket}/xr', endpoint: '{s3_server.endpoint}'}}\n"
        "parameters: {chunks: [[4, 4, 6]], dask_chunks: [{time: 6}]}\n"
        "read: {patterns: [full, timeseries]}\n"
    )
    (trial,) = make_plan(sweep).trials
    task = TrialTask(
        trial,
        sweep.workload,
        sweep.read,
        MeasureSpec(repeats=1),
        str(tmp_path),
        storage=sweep.storage,
    )
    backend = placed.make_backend(task)
    assert isinstance(backend, SlabBackend)
    result = TrialResult(trial.id, "ok")
    steps.one_repeat(task, backend, tmp_path / f"r0{backend.suffix}", result)
    full = result.reads["full"][0]
    assert full["bytes"] == sweep.workload.nbytes and full["requests"]["GET"] >= 1
    assert full["resident_fraction"] <= 0.05  # fetched every stored byte: cold
    assert result.reads["timeseries"][0]["requests"]["GET"] >= 1
    # 6 steps per dask chunk over 4 stored: a boundary at 6 splits the second stored chunk
    assert result.stored["dask_chunks_read"] == "time=6,y=4,x=6"  # y and x: as stored
    assert result.stored["dask_chunks_split"] == "time"
