"""The h5py backend's parallel trials: ranks with the mpio driver, or a clear reason why not.

The project environment's h5py wheel is serial, so parallel trials run in a
second environment whose h5py and mpi4py are built against the system's
MPICH and parallel HDF5 (``make venv-phdf5``; Debian's ``libhdf5-mpich-dev``
and ``mpich``).  Without it those tests skip, unless
``IOTUNE_REQUIRE_PARALLEL_HDF5=1`` (CI), where that is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest
import xarray as xr
import yaml

from iotune.backends.h5py.backend import H5pyBackend, create_dataset
from iotune.backends.h5py.rank import check_file
from iotune.core.errors import NotApplicable
from iotune.measuring.data import Field
from iotune.model.spec import Workload

ROOT = Path(__file__).parents[2]
PARALLEL_PYTHON = Path(os.environ.get("IOTUNE_PARALLEL_PYTHON", ROOT / ".venv-phdf5/bin/python"))
W = Workload(("time", "y", "x"), (8, 32, 48))
PARAMS = {"chunks": "4x16x16", "codec": "zlib", "level": 1, "shuffle": "byte", "chunk_cache": None}


def _parallel_python() -> Path:
    reason = ""
    if not PARALLEL_PYTHON.exists():
        reason = f"no parallel-HDF5 environment at {PARALLEL_PYTHON} (make venv-phdf5)"
    if reason and os.environ.get("IOTUNE_REQUIRE_PARALLEL_HDF5") == "1":
        pytest.fail(f"IOTUNE_REQUIRE_PARALLEL_HDF5=1 but {reason}")
    if reason:
        pytest.skip(reason)
    return PARALLEL_PYTHON


@pytest.mark.skipif(h5py.get_config().mpi, reason="this h5py is built with MPI")
def test_serial_h5py_records_nprocs_above_one_as_not_applicable_with_the_reason():
    with pytest.raises(NotApplicable, match="built without MPI"):
        H5pyBackend.resolve({**PARAMS, "nprocs": 2}, W)
    effective, notes = H5pyBackend.resolve({**PARAMS, "nprocs": 1, "io": "independent"}, W)
    assert "nprocs" not in effective and notes == ["io applies only to nprocs > 1"]


def _write(path: Path, params: dict, data: np.ndarray) -> None:
    with h5py.File(path, "w") as fh:
        create_dataset(fh, W, params)[...] = data


def test_rank_zeros_check_finds_wrong_values_and_a_wrong_layout(tmp_path):
    data = Field(W).slab(0, W.shape[0])
    path = tmp_path / "f.h5"
    _write(path, PARAMS, data)
    assert check_file(path, PARAMS, W) == ""
    wrong = data.copy()
    wrong[5, 3, 7] += 1
    _write(path, PARAMS, wrong)
    assert "differs from the data written in steps" in check_file(path, PARAMS, W)
    _write(path, {**PARAMS, "codec": "none", "level": None, "shuffle": "none"}, data)
    assert "file filters are" in check_file(path, PARAMS, W)


def test_rank_zeros_check_compares_bytes_so_nan_in_the_users_data_matches(tmp_path):
    values = np.arange(8 * 32 * 48, dtype="float32").reshape(8, 32, 48)
    values[:, :5, :7] = np.nan  # a land mask
    source = tmp_path / "masked.nc"
    xr.Dataset({"sst": (W.dims, values)}).to_netcdf(source)
    workload = Workload(W.dims, W.shape, "float32", field="file", path=str(source), variable="sst")
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as fh:
        create_dataset(fh, workload, PARAMS)[...] = Field(workload).slab(0, 8)
    assert check_file(path, PARAMS, workload) == ""


SPEC = {
    "version": 1,
    "name": "parallel-hdf5",
    "workload": {"shape": {"time": 16, "y": 128, "x": 128}, "dtype": "int16"},
    "backend": "h5py",
    "hints": {"cb_off": {"romio_cb_write": "disable", "romio_cb_read": "disable"}},
    "parameters": {
        "nprocs": [1, 2],
        "chunks": [[4, 64, 64]],
        "codec": ["none", "zlib"],
        "level": 1,
        "io": ["collective", "independent"],
        "hints": ["default", "cb_off"],
    },
    "read": {"patterns": ["full", "timeseries"]},
    "measure": {"repeats": 2},
}


def _run(python: Path, spec: dict, out: Path) -> subprocess.CompletedProcess[str]:
    path = out.parent / f"{out.name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    run = [str(python), "-m", "iotune", "run", str(path), "-o", str(out)]
    return subprocess.run(run, capture_output=True, text=True, timeout=600, cwd=out.parent)


@pytest.mark.mpi
@pytest.mark.slow
def test_parallel_hdf5_sweep_with_hints_and_collective_io(tmp_path):
    python = _parallel_python()
    out = tmp_path / "out"
    proc = _run(python, {**SPEC, "hints": {"default": {}, **SPEC["hints"]}}, out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ds = xr.open_dataset(out / "results.nc")
    two = ds.sel(nprocs=2)
    ok = (
        two.status.sel(codec="none").values.ravel().tolist()
        + two.status.sel(codec="zlib", io="collective").values.ravel().tolist()
    )
    assert ok == ["ok"] * 6, two.error.values
    # HDF5 writes filtered chunks in parallel only collectively: recorded, not faked
    independent = two.sel(codec="zlib", io="independent")
    assert set(independent.status.values.ravel()) == {"not_applicable"}
    assert "need io: collective" in str(independent.error.values.ravel()[0])
    # every rank's block read back cold and verified; throughput from the slowest rank
    reads = two.sel(pattern="full", codec="zlib", io="collective")
    assert float(reads.resident_fraction.max()) <= 0.05
    assert (reads.read_s >= reads.read_s_fastest_rank).all()
    assert float(two.ratio.sel(codec="zlib", io="collective").min()) > 1.2
    # the hints MPI-IO took for the file, as stored per trial
    effective = json.loads(
        two.hints_effective.sel(codec="none", io="collective", hints="cb_off").item()
    )
    assert effective["romio_cb_write"] == "disable" and effective["romio_cb_read"] == "disable"
    default = json.loads(
        two.hints_effective.sel(codec="none", io="collective", hints="default").item()
    )
    assert default["romio_cb_write"] == "automatic"
    assert ds.attrs["mpi_library"].startswith("MPICH")
    # nprocs 1 is the ordinary serial trial; io and hints do not apply to it
    one = ds.sel(nprocs=1, codec="zlib")
    assert one.status.sel(io="collective", hints="default").item() == "ok"
    assert (
        "io applies only to nprocs > 1" in one.error.sel(io="independent", hints="default").item()
    )
    # ranks read back their blocks; the pixel histories are measured at nprocs 1, and
    # a parallel trial says what it did not measure
    ts = one.read_MiBps.sel(io="collective", hints="default", pattern="timeseries")
    assert np.isfinite(ts).all()
    unread = two.sel(codec="zlib", io="collective", hints="default")
    assert "read patterns not measured: timeseries" in unread.error.item()
    assert np.isnan(unread.read_MiBps.sel(pattern="timeseries")).all()


@pytest.mark.mpi
@pytest.mark.slow
def test_a_parallel_read_that_delivers_nothing_fails_its_trial(tmp_path):
    python = _parallel_python()
    shim = Path(__file__).with_name("hdf5_stale_read.py")
    mpiexec = python.parent / "mpiexec"
    launcher = f"{mpiexec if mpiexec.exists() else 'mpiexec'} -n {{nprocs}} {python} {shim}"
    spec = {
        **SPEC,
        "hints": {"default": {}},
        "parameters": {"nprocs": 2, "codec": "none", "chunks": [[4, 64, 64]]},
        "read": {"patterns": ["full"]},
        "execution": {"launcher": launcher},
    }
    out = tmp_path / "stale"
    proc = _run(python, spec, out)
    assert proc.returncode == 1, proc.stderr[-2000:]  # 1: a trial failed
    ds = xr.open_dataset(out / "results.nc")
    assert ds.status.item() == "failed"
    assert "read back other bytes than they wrote" in ds.error.item()


@pytest.mark.mpi
@pytest.mark.slow
def test_parallel_hdf5_stripes_an_empty_directory_and_reads_the_layout_back(tmp_path):
    python = _parallel_python()
    bin_dir, state = tmp_path / "bin", tmp_path / "lfs-state"
    bin_dir.mkdir()
    (bin_dir / "lfs").symlink_to(ROOT / "tests" / "fixtures" / "fake-lfs")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_LFS_DIR": str(state),
        "IOTUNE_FS_TYPE": "lustre",  # the file-system probe, overridden
    }
    spec = {
        **SPEC,
        "hints": {"default": {}},
        "parameters": {"nprocs": 2, "codec": "zlib", "chunks": [[4, 64, 64]], "level": 1},
        "read": {"patterns": ["full"]},
    }
    spec["parameters"] |= {"stripe_count": 4, "stripe_size": "1MiB"}
    out = tmp_path / "striped"
    path = tmp_path / "striped.yaml"
    path.write_text(yaml.safe_dump(spec))
    run = [str(python), "-m", "iotune", "run", str(path), "-o", str(out)]
    proc = subprocess.run(run, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    calls = [json.loads(line) for line in (state / "calls.jsonl").read_text().splitlines()]
    assert calls[0]["argv"][:5] == ["setstripe", "-c", "4", "-S", "1048576"]
    assert calls[0]["target"] == {"exists": True, "is_dir": True, "entries": []}
    assert calls[-1]["argv"][0] == "getstripe" and calls[-1]["argv"][-1].endswith("shared.h5")
    ds = xr.open_dataset(out / "results.nc")
    assert ds.status.item() == "ok", ds.error.item()
    stripe = json.loads(ds.stripe_layout.item())
    assert stripe["applied"]
    assert stripe["layout"]["stripe_count"] == 4 and stripe["layout"]["stripe_size"] == 2**20
    # the ranks asked MPI-IO to stripe the file too; the result shows what it made of it
    effective = json.loads(ds.hints_effective.item())
    ignored = json.loads(ds.hints_ignored.item())
    for hint, value in (("striping_factor", "4"), ("striping_unit", "1048576")):
        shown = ignored[hint]["requested"] if hint in ignored else effective[hint]
        assert shown == value, (effective, ignored)
    assert ds.attrs["stripe_settings"].startswith("applied with lfs setstripe")
