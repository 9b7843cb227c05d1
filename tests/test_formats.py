"""The formats against each other: equal sizes, files other tools read, isolation, layouts.

netCDF4 and h5py bundle different HDF5 builds; this process may already hold
netCDF4's, so anything that needs h5py (and hdf5plugin's filters) runs in a
subprocess of its own, as iotune's worker processes do.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from iotune.app import api
from iotune.backends import get_backend
from iotune.measuring.data import Field
from iotune.model.spec import Workload
from iotune.specfile.parse import parse_spec

CODECS = ("none", "zlib", "bzip2", "blosc-lz4", "zstd")


def write_spec(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump({"version": 1, **data}, sort_keys=False))
    return path


def iotune(*args, **kw) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


def netcdf4_plugin_env() -> dict[str, str]:
    """The environment of a process that has imported netCDF4.

    Importing netCDF4 points ``HDF5_PLUGIN_PATH`` at its own filter plugins,
    built for its HDF5; children inherit that, as iotune's workers do.
    """
    import netCDF4

    return {**os.environ, "HDF5_PLUGIN_PATH": str(Path(netCDF4.__file__).parent / "plugins")}


def clean_env() -> dict[str, str]:
    """The environment of a user's fresh h5py session: no netCDF4 plugin path."""
    return {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}


def python(code: str, *args, env: dict[str, str] | None = None) -> str:
    """Run ``code`` in a fresh interpreter; return its stdout."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env() if env is None else env,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def write_with(backend: str, path: Path, workload: Workload, **given) -> np.ndarray:
    """Write the workload with an iotune backend in this process; return the data."""
    cls = get_backend(backend)
    params, _notes = cls.resolve(given, workload)
    data = Field(workload).slab(0, workload.shape[0])
    writer = cls().open_writer(path, workload, params)
    writer.write(0, data[:3])
    writer.write(3, data[3:])
    writer.close()
    cls().verify(path, params)
    return data


# --- stored sizes ------------------------------------------------------------


@pytest.fixture(scope="module")
def size_sweep(tmp_path_factory):
    """netcdf4, h5py and zarr storing the same 4 MiB field with every codec family."""
    tmp = tmp_path_factory.mktemp("sizes")
    spec = write_spec(
        tmp / "sizes.yaml",
        {
            "name": "sizes",
            "workload": {"shape": {"time": 32, "y": 256, "x": 256}, "dtype": "int16"},
            "backend": ["netcdf4", "h5py", "zarr"],
            "parameters": {"chunks": [8, 128, 128], "codec": list(CODECS), "level": 4},
            "read": {"patterns": ["full"]},
            "measure": {"repeats": 1},
        },
    )
    return api.run(spec, out=tmp / "out", progress=False)


@pytest.mark.slow
def test_every_backend_stores_every_codec(size_sweep):
    ds = size_sweep
    assert list(ds["backend"].values) == ["netcdf4", "h5py", "zarr"]
    assert set(ds["status"].values.ravel()) == {"ok"}, ds["error"].values
    for backend in ds["backend"].values:
        effective = [json.loads(e) for e in ds["effective"].sel(backend=backend).values]
        assert [e["codec"] for e in effective] == list(CODECS)
        assert {e["level"] for e in effective[1:]} == {4}


@pytest.mark.slow
@pytest.mark.parametrize("codec", CODECS)
def test_the_same_codec_stores_the_same_size_in_every_backend(size_sweep, codec):
    """HDF5's few KiB of metadata and zarr's per-chunk files are negligible at 4 MiB."""
    sizes = size_sweep["file_bytes"].sel(codec=codec).to_series()
    assert sizes.max() / sizes.min() <= 1.05, sizes.to_dict()
    if codec == "none":
        raw = size_sweep.attrs["raw_bytes"]
        assert sizes.max() <= 1.01 * raw and sizes.min() >= raw


@pytest.mark.slow
def test_codecs_really_compress_and_order_alike_in_every_backend(size_sweep):
    sizes = size_sweep["file_bytes"]
    for backend in size_sweep["backend"].values:
        s = {c: float(sizes.sel(backend=backend, codec=c)) for c in CODECS}
        assert s["none"] > 1.5 * s["blosc-lz4"], (backend, s)
        assert s["blosc-lz4"] > s["zlib"] > s["bzip2"], (backend, s)
        assert s["zstd"] < s["blosc-lz4"], (backend, s)


# --- files other tools read ---------------------------------------------------

W = Workload(("time", "y", "x"), (8, 32, 48))

READ_WITH_H5PY = """
    import json, sys
    import h5py, hdf5plugin, numpy as np
    out = {}
    for path in sys.argv[1:]:
        with h5py.File(path, "r") as fh:
            dset = fh["data"]
            np.save(path + ".npy", dset[...])
            plist = dset.id.get_create_plist()
            out[path] = {
                "scales": [d[0].name.lstrip("/") if len(d) else None for d in dset.dims],
                "attrs": {k: str(v) for k, v in dset.attrs.items()},
                "filters": [plist.get_filter(i)[0] for i in range(plist.get_nfilters())],
                "chunks": list(dset.chunks),
            }
    print(json.dumps(out))
"""


@pytest.mark.parametrize(
    ("codec", "filters"),
    [("zlib", [2, 1]), ("bzip2", [307]), ("zstd", [32015]), ("blosc-lz4", [32001])],
)
def test_a_netcdf4_file_reads_in_h5py_with_the_same_values(tmp_path, codec, filters):
    path = tmp_path / "f.nc"
    data = write_with("netcdf4", path, W, chunks=(4, 16, 16), codec=codec)
    info = json.loads(python(READ_WITH_H5PY, path))[str(path)]
    np.testing.assert_array_equal(np.load(f"{path}.npy"), data)
    assert info["scales"] == ["time", "y", "x"]  # netCDF dimensions are HDF5 dimension scales
    assert info["filters"] == filters
    assert info["chunks"] == [4, 16, 16]


WRITE_WITH_H5PY_BACKEND = """
    import json, sys
    from pathlib import Path
    from iotune.backends.h5py.backend import H5pyBackend
    from iotune.model.spec import Workload
    from iotune.measuring.data import Field

    H5pyBackend.prepare_process()  # what iotune's h5py worker does first
    w = Workload(("time", "y", "x"), (8, 32, 48))
    data = Field(w).slab(0, 8)
    for arg in sys.argv[1:]:
        codec = Path(arg).stem
        params, _ = H5pyBackend.resolve({"chunks": (4, 16, 16), "codec": codec}, w)
        writer = H5pyBackend().open_writer(Path(arg), w, params)
        writer.write(0, data)
        writer.close()
        H5pyBackend().verify(Path(arg), params)
"""

H5_CODECS = ("zlib", "bzip2", "zstd", "blosc-lz4")


@pytest.fixture(scope="module")
def h5py_files(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("h5py-files")
    paths = {codec: tmp / f"{codec}.h5" for codec in H5_CODECS}
    # inheriting netCDF4's plugin path, as a worker of a sweep that also runs netCDF4 does:
    # without prepare_process, h5py would load netCDF4's blosc plugin and fail to write
    python(WRITE_WITH_H5PY_BACKEND, *paths.values(), env=netcdf4_plugin_env())
    return paths


def test_an_h5py_file_reads_back_in_a_fresh_h5py(h5py_files):
    info = json.loads(python(READ_WITH_H5PY, *h5py_files.values()))
    data = Field(W).slab(0, 8)
    for path in h5py_files.values():
        np.testing.assert_array_equal(np.load(f"{path}.npy"), data)
        attrs = info[str(path)]["attrs"]
        # the dimension names twice: iotune's attributes, and HDF5 dimension scales
        # (their references in DIMENSION_LIST) as netCDF-4 and h5netcdf read them
        assert {k: v for k, v in attrs.items() if k != "DIMENSION_LIST"} == {
            "dim0": "time",
            "dim1": "y",
            "dim2": "x",
        }
        assert info[str(path)]["scales"] == ["time", "y", "x"]


@pytest.mark.parametrize("codec", H5_CODECS)
def test_an_h5py_file_opens_in_xarray(h5py_files, codec):
    """With h5netcdf when it is installed; netCDF-4 reads plain HDF5 files too (phony dims)."""
    data = Field(W).slab(0, 8)
    path = h5py_files[codec]
    try:
        import h5netcdf  # noqa: F401
    except ImportError:
        engine = "netcdf4"  # this process already holds netCDF4's HDF5, never h5py's
    else:
        engine = "h5netcdf"
    with xr.open_dataset(path, engine=engine, mask_and_scale=False) as ds:
        np.testing.assert_array_equal(ds["data"].values, data)
        assert ds["data"].dtype == np.int16
        assert [ds["data"].attrs[f"dim{i}"] for i in range(3)] == ["time", "y", "x"]
        if engine == "h5netcdf":  # the dimension scales name the dimensions
            assert ds["data"].dims == ("time", "y", "x")


@pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")
@pytest.mark.parametrize("codec", CODECS)
def test_a_zarr_store_opens_in_xarray_with_the_workloads_dimensions(tmp_path, codec):
    path = tmp_path / "s.zarr"
    data = write_with("zarr", path, W, chunks=(4, 16, 16), codec=codec)
    with xr.open_zarr(path, consolidated=False) as ds:
        assert list(ds.data_vars) == ["data"]
        assert ds["data"].dims == ("time", "y", "x")
        assert dict(ds.sizes) == {"time": 8, "y": 32, "x": 48}
        assert ds["data"].dtype == np.int16
        np.testing.assert_array_equal(ds["data"].values, data)


# --- many backends in one sweep ------------------------------------------------

MULTI = {
    "name": "multi",
    "workload": {"shape": {"time": 16, "y": 64, "x": 64}, "dtype": "int16"},
    "backend": ["netcdf4", "h5py", "zarr", "posix"],
    "parameters": {"chunks": [8, 32, 32], "codec": ["none", "blosc-lz4", "bzip2", "zstd"]},
    "read": {"patterns": ["full", "spatial", "random"]},
    "measure": {"repeats": 1},
}


@pytest.mark.slow
def test_a_sweep_over_every_backend_runs_each_in_its_own_worker(tmp_path):
    spec = write_spec(tmp_path / "multi.yaml", MULTI)
    proc = iotune("run", spec, "-o", tmp_path / "out", "--no-progress")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "failed" not in proc.stdout
    with xr.open_dataset(tmp_path / "out" / "results.nc") as ds:
        assert list(ds["backend"].values) == ["netcdf4", "h5py", "zarr", "posix"]
        status = ds["status"].to_pandas()
        assert status.loc[["netcdf4", "h5py", "zarr"]].eq("ok").all(axis=None), status
        # h5py's blosc works although netCDF4 (another HDF5, other plugins) ran first
        assert status.loc["h5py", "blosc-lz4"] == "ok"
        posix = ds.sel(backend="posix")
        assert posix["status"].sel(codec="none").item() == "ok"
        for codec in ("blosc-lz4", "bzip2", "zstd"):
            assert posix["status"].sel(codec=codec).item() == "not_applicable"
            assert "codec does not apply to posix" in posix["error"].sel(codec=codec).item()
            assert np.isnan(posix["write_MiBps"].sel(codec=codec)).all()
        assert float(posix["ratio"].sel(codec="none")) == pytest.approx(1.0)
        ratio = ds["ratio"].sel(codec="bzip2")
        assert (ratio.sel(backend=["netcdf4", "h5py", "zarr"]) > 1.5).all()


def test_posix_counts_as_measured_at_codec_none_when_none_is_listed_first():
    sweep = parse_spec({"version": 1, **MULTI})
    points = {(p.coords["backend"], p.coords["codec"]): p for p in api.make_plan(sweep).points}
    assert points[("posix", "none")].applicable
    assert "codec does not apply to posix" in points[("posix", "zstd")].reason


def test_posix_is_measured_at_codec_none_whatever_the_list_order():
    sweep = parse_spec(
        {"version": 1, **MULTI, "parameters": {"codec": ["blosc-lz4", "none", "zstd"]}}
    )
    points = {(p.coords["backend"], p.coords["codec"]): p for p in api.make_plan(sweep).points}
    assert points[("posix", "none")].applicable
    assert not points[("posix", "blosc-lz4")].applicable


# --- a worker that dies -------------------------------------------------------


def _children(pid: int) -> list[tuple[int, bytes]]:
    """``(pid, cmdline)`` of the processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append((int(stat.parent.name), (stat.parent / "cmdline").read_bytes()))
        except (OSError, IndexError, ValueError):
            continue  # the process went away meanwhile
    return found


@pytest.mark.slow
def test_a_killed_worker_fails_its_trial_and_the_sweep_goes_on(tmp_path):
    spec = write_spec(
        tmp_path / "kill.yaml",
        {
            "name": "kill",
            "workload": {"shape": {"time": 32, "y": 256, "x": 256}},
            "backend": "netcdf4",
            "parameters": {"chunks": [8, 128, 128], "codec": ["bzip2", "zlib", "none"]},
            "read": {"patterns": ["full"]},
            # no probes: the worker killed must be running a trial, not a noise probe
            "measure": {"repeats": 3, "noise_probes": 0},
        },
    )
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = trial = None
    try:
        deadline = time.monotonic() + 120
        while killed is None and time.monotonic() < deadline and proc.poll() is None:
            running = list(out.glob("iotune-scratch-*/trial-*"))
            workers = [pid for pid, cmd in _children(proc.pid) if b"spawn_main" in cmd]
            if running and workers:
                assert len(workers) == 1, "one worker per backend"
                trial = running[0].name.removeprefix("trial-")
                os.kill(workers[0], signal.SIGKILL)
                killed = workers[0]
            time.sleep(0.01)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert killed is not None, "no trial was caught running"
    assert proc.returncode == 1, stdout + stderr
    assert "2 ok" in stdout and "1 failed" in stdout
    with xr.open_dataset(out / "results.nc") as ds:
        status = ds["status"].to_series()
        failed = status[status == "failed"].index.tolist()
        # the killed one, whichever the seeded interleaved order ran first
        (victim,) = [c for c in ds["codec"].values if ds["trial_id"].sel(codec=c).item() == trial]
        assert failed == [victim], status.to_dict()
        error = ds["error"].sel(codec=victim).item()
        assert "worker process died" in error and "netcdf4" in error
        assert np.isnan(ds["write_s"].sel(codec=victim)).all()
        others = [c for c in ds["codec"].values if c != victim]
        assert ds["status"].sel(codec=others).values.tolist() == ["ok", "ok"]
        assert ds["write_s"].sel(codec=others).notnull().all()
    assert not Path(f"/proc/{killed}").exists()
    assert not list(out.glob("iotune-scratch-*"))


# --- chunk shape against access pattern ---------------------------------------


@pytest.fixture(scope="module")
def layout_sweep(tmp_path_factory):
    """Time-long and map-shaped chunks, read as full maps and as pixel histories."""
    tmp = tmp_path_factory.mktemp("layouts")
    spec = write_spec(
        tmp / "layouts.yaml",
        {
            "name": "layouts",
            "workload": {"shape": {"time": 64, "y": 256, "x": 256}, "dtype": "int16"},
            "backend": ["netcdf4", "h5py", "zarr"],
            "parameters": {
                "chunks": [[64, 16, 16], [1, 256, 256]],
                "codec": "zlib",
                "chunk_cache": "1MiB",
            },
            "read": {
                "patterns": ["spatial", "timeseries"],
                # whole maps at 4 times: one chunk per map for [1, 256, 256], but all
                # 256 chunks (the whole file, which the 1 MiB cache cannot hold) for
                # [64, 16, 16]; a pixel history is the reverse
                "spatial": {"time": 4, "y": 1.0, "x": 1.0},
                "timeseries": {"pixels": 8},
            },
            "measure": {"repeats": 2},
        },
    )
    return api.run(spec, out=tmp / "out", progress=False)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["netcdf4", "h5py", "zarr"])
def test_time_long_chunks_win_time_series_and_map_chunks_win_maps(layout_sweep, backend):
    ds = layout_sweep.sel(backend=backend)
    assert set(ds["status"].values.ravel()) == {"ok"}, ds["error"].values
    read_s = ds["read_s"].median("repeat")
    long, flat = read_s.sel(chunks="64x16x16"), read_s.sel(chunks="1x256x256")
    ts_long, ts_flat = float(long.sel(pattern="timeseries")), float(flat.sel(pattern="timeseries"))
    map_long, map_flat = float(long.sel(pattern="spatial")), float(flat.sel(pattern="spatial"))
    assert ts_flat > 1.5 * ts_long, (ts_long, ts_flat)
    assert map_long > 1.5 * map_flat, (map_long, map_flat)
    assert ds["read_bytes"].sel(pattern="spatial").values.tolist() == [4 * 256 * 256 * 2] * 2
