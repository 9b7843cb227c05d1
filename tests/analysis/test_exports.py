"""Exports: their syntax, and that the code and commands really produce the settings."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import xarray as xr

from iotune.analysis import exports
from iotune.backends import exports_base
from iotune.backends.exports_base import Target
from iotune.backends.h5py import exports as h5py_exports
from iotune.backends.netcdf4 import exports as netcdf4_exports
from iotune.backends.zarr import exports as zarr_exports
from iotune.core.errors import NotApplicable
from iotune.model import codecs

TARGET = Target("tas", ("time", "lat", "lon"), (16, 32, 32), "int16")
CODEC_SETTINGS = {
    "zlib": {"codec": "zlib", "level": 4, "shuffle": "byte"},
    "bzip2": {"codec": "bzip2", "level": 9, "shuffle": "none"},
    "zstd": {"codec": "zstd", "level": 3, "shuffle": "none"},
    "blosc-lz4": {"codec": "blosc-lz4", "level": 5, "shuffle": "byte"},
    "none": {"codec": "none", "level": None, "shuffle": "none"},
}
#: what netCDF4-python's Variable.filters() reports for each codec
FILTERS = {
    "zlib": {"zlib": True, "complevel": 4, "shuffle": True},
    "bzip2": {"bzip2": True, "complevel": 9},
    "zstd": {"zstd": True, "complevel": 3},
    "blosc-lz4": {"blosc": {"compressor": "blosc_lz4", "shuffle": 1}, "complevel": 5},
    "none": {"zlib": False, "bzip2": False, "zstd": False, "blosc": False},
}
CHUNK_SPEC = re.compile(r"^[A-Za-z_][\w]*/\d+(,[A-Za-z_][\w]*/\d+)*$")
HINTS = re.compile(r"^[^:]+(:[a-z_]+=[^:,=\s]+)+$")


def settings(codec: str, chunks: str = "8x16x16") -> dict:
    return {"backend": "netcdf4", "chunks": chunks, **CODEC_SETTINGS[codec]}


def test_nccopy_chunk_spec_and_filters() -> None:
    args = netcdf4_exports.nccopy_args(settings("zlib", "16x16x32"), TARGET)  # 16 KiB chunks
    assert args == ["-c", "time/16,lat/16,lon/32", "-d", "4", "-s"]
    assert CHUNK_SPEC.match(args[1])
    assert netcdf4_exports.nccopy_args(settings("bzip2"), TARGET)[-2:] == ["-F", "tas,307,9"]
    assert netcdf4_exports.nccopy_args(settings("zstd"), TARGET)[-2:] == ["-F", "tas,32015,3"]
    # blosc: 4 reserved values, level, shuffle, compressor code (lz4 = 1)
    assert netcdf4_exports.nccopy_args(settings("blosc-lz4"), TARGET)[-2:] == [
        "-F",
        "tas,32001,0,0,0,0,5,1,1",
    ]
    assert netcdf4_exports.nccopy_args(settings("none", "contiguous"), TARGET) == [
        *("-c", "tas:contiguous", "-d", "0"),
    ]
    zstd_shuffled = {**settings("zstd"), "shuffle": "byte"}
    assert netcdf4_exports.nccopy_args(zstd_shuffled, TARGET)[-4:] == [
        "-F",
        "tas,2",
        "-F",
        "tas,32015,3",
    ]
    # 1 x 16 x 16 int16 is 512 bytes: below nccopy's silent 8 KiB minimum
    assert netcdf4_exports.nccopy_args(settings("none", "1x16x16"), TARGET)[:4] == [
        *("-c", "time/1,lat/16,lon/16", "-M", "0"),
    ]
    assert "-c" not in netcdf4_exports.nccopy_args(settings("none", "auto"), TARGET)


def test_h5repack_syntax() -> None:
    assert h5py_exports.h5repack_args(settings("zlib"), TARGET) == [
        *("-l", "tas:CHUNK=8x16x16", "-f", "tas:SHUF", "-f", "tas:GZIP=4"),
    ]
    assert h5py_exports.h5repack_args(settings("bzip2"), TARGET)[-1] == "tas:UD=307,0,1,9"
    assert h5py_exports.h5repack_args(settings("zstd"), TARGET)[-1] == "tas:UD=32015,0,1,3"
    assert h5py_exports.h5repack_args(settings("blosc-lz4"), TARGET)[-1] == (
        "tas:UD=32001,0,7,0,0,0,0,5,1,1"
    )
    assert h5py_exports.h5repack_args(settings("none", "contiguous"), TARGET) == [
        *("-l", "tas:CONTI", "-f", "tas:NONE"),
    ]


def test_lfs_setstripe() -> None:
    assert exports_base.lfs_setstripe_args(
        {"stripe_count": 8, "stripe_size": 4 * 2**20}, "/lus/o"
    ) == [
        *("lfs", "setstripe", "-c", "8", "-S", "4M", "/lus/o"),
    ]
    assert exports_base.lfs_setstripe_args({"stripe_count": -1}) == [
        "lfs",
        "setstripe",
        "-c",
        "-1",
        "DIR",
    ]
    assert exports_base.lfs_setstripe_args({"stripe_size": 65536})[-2:] == ["64K", "DIR"]
    with pytest.raises(NotApplicable, match="no Lustre stripe"):
        exports_base.lfs_setstripe_args({"codec": "zlib"})


def test_mpi_hint_strings() -> None:
    hints = {"romio_cb_write": "enable", "cb_buffer_size": 16777216, "romio_no_indep_rw": True}
    value = exports_base.mpich_hints(hints)
    assert value == "*:romio_cb_write=enable:cb_buffer_size=16777216:romio_no_indep_rw=true"
    assert HINTS.match(value)
    assert exports_base.mpich_hints(hints, pattern="*.nc").startswith("*.nc:romio_cb_write=")
    assert exports_base.romio_hints_file(hints).splitlines() == [
        "romio_cb_write enable",
        "cb_buffer_size 16777216",
        "romio_no_indep_rw true",
    ]
    with pytest.raises(NotApplicable, match="contains ':'"):
        exports_base.mpich_hints({"cb_config_list": "*:1"})
    with pytest.raises(NotApplicable, match="empty"):
        exports_base.romio_hints_file({})
    listed = exports.all_exports({"backend": "mpiio"}, TARGET, hints={})
    assert set(listed["mpich_mpiio_hints"]) == {"unavailable"}


def test_posix_has_no_chunk_exports() -> None:
    found = exports.all_exports({"backend": "posix", "transfer_size": 2**20}, TARGET)
    assert sorted(found) == ["fio", "posix_os_calls"]  # the same writes, no layout


def test_a_backend_not_installed_here_says_so_in_its_exports() -> None:
    """Results of a plugin format opened where the plugin is not installed."""
    listed = exports.all_exports({"backend": "no-such-format", "chunks": "8x8x8"}, TARGET)
    assert list(listed) == ["exports"]
    reason = listed["exports"]["unavailable"]
    assert "'no-such-format'" in reason and reason.endswith("install it to see its exports")


def test_unexpressible_codec_is_reported_not_raised() -> None:
    bzip2_shuffled = {**settings("bzip2"), "shuffle": "byte"}
    listed = exports.all_exports(bzip2_shuffled, TARGET)
    assert "shuffle filter only with zlib" in listed["netcdf4_create_variable"]["unavailable"]
    assert listed["nccopy"]["value"][-6:-2] == ["-F", "tas,2", "-F", "tas,307,9"]


def sample() -> xr.Dataset:
    data = (np.arange(16 * 32 * 32).reshape(16, 32, 32) % 997).astype("int16")
    return xr.Dataset({"tas": (TARGET.dims, data)})


@pytest.mark.parametrize("codec", list(CODEC_SETTINGS))
def test_xarray_netcdf4_encoding_writes_those_settings(codec: str, tmp_path: Path) -> None:
    encoding = netcdf4_exports.xarray_netcdf4_encoding(settings(codec), TARGET)
    sample().to_netcdf(tmp_path / "x.nc", engine="netcdf4", encoding=encoding)
    check_file(tmp_path / "x.nc", codec, [8, 16, 16])


@pytest.mark.parametrize("codec", ["zlib", "blosc-lz4", "none"])
def test_netcdf4_create_variable_keywords(codec: str, tmp_path: Path) -> None:
    kwargs = netcdf4_exports.netcdf4_create_variable(
        settings(codec, "contiguous" if codec == "none" else "4x8x8"), TARGET
    )
    with netCDF4.Dataset(tmp_path / "n.nc", "w") as nc:
        for dim, size in zip(TARGET.dims, TARGET.shape, strict=True):
            nc.createDimension(dim, size)
        nc.createVariable(TARGET.variable, TARGET.dtype, TARGET.dims, **kwargs)[:] = (
            sample().tas.values
        )
    check_file(tmp_path / "n.nc", codec, "contiguous" if codec == "none" else [4, 8, 8])


@pytest.mark.parametrize("codec", ["zlib", "bzip2", "zstd", "blosc-lz4", "none"])
def test_zarr_encoding_code_runs(codec: str, tmp_path: Path) -> None:
    code = zarr_exports.zarr_encoding_code({**settings(codec), "shards": "16x32x32"}, TARGET)
    namespace: dict = {}
    exec(code, namespace)
    sample().to_zarr(tmp_path / "z.zarr", encoding=namespace["encoding"], zarr_format=3)
    import zarr

    array = zarr.open_array(tmp_path / "z.zarr" / "tas")
    assert array.chunks == (8, 16, 16) and array.shards == (16, 32, 32)
    names = [c.to_dict()["name"] for c in array.compressors]
    expected = {
        "zlib": ["numcodecs.shuffle", "numcodecs.zlib"],
        "bzip2": ["numcodecs.bz2"],
        "zstd": ["zstd"],
        "blosc-lz4": ["blosc"],
        "none": [],
    }[codec]
    assert names == expected
    assert np.array_equal(array[:], sample().tas.values)


_H5PY_CHECK = """
import json, numpy as np
data = np.arange(np.prod(dset.shape), dtype=dset.dtype).reshape(dset.shape) % 1000
dset[...] = data
with h5py.File(path) as fh:
    d = fh["tas"]
    plist = d.id.get_create_plist()
    print(json.dumps({
        "cache": f.id.get_access_plist().get_cache()[1:],
        "chunks": d.chunks,
        "filters": [plist.get_filter(i)[0] for i in range(plist.get_nfilters())],
        "equal": bool(np.array_equal(d[...], data)),
    }))
f.close()
"""


@pytest.mark.parametrize("codec", ["zlib", "bzip2", "zstd", "blosc-lz4", "none"])
def test_h5py_code_writes_the_layout_the_sweep_measured(codec: str, tmp_path: Path) -> None:
    params = {**settings(codec), "chunk_cache": 2**20}
    code = h5py_exports.h5py_code(params, TARGET)
    # a fresh interpreter, as a pasted snippet runs: this one has imported netCDF4,
    # which set HDF5_PLUGIN_PATH to its own filters for the process and its children
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    script = f"path = {str(tmp_path / 'h.h5')!r}\n{code}\n{_H5PY_CHECK}"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["chunks"] == [8, 16, 16] and got["equal"]
    # the backend's cache: 1 MiB; slots the first prime >= 100 x 256 chunks of 4 KiB; w0 0.75
    assert got["cache"] == [25601, 2**20, 0.75]
    assert got["filters"] == codecs.h5py_expected_filters(exports_base.codec_of(params))
    opened = xr.open_dataset(tmp_path / "h.h5", engine="h5netcdf")  # named dimensions
    assert opened[TARGET.variable].dims == TARGET.dims
    opened.close()


def test_h5py_code_leaves_auto_chunks_to_h5py_only_where_the_backend_did() -> None:
    auto = {**settings("zlib"), "chunks": "auto"}
    assert "chunks=True" in h5py_exports.h5py_code(auto, TARGET)
    # without a codec the backend stores "auto" contiguously
    plain = h5py_exports.h5py_code({**settings("none"), "chunks": "auto"}, TARGET)
    (create,) = [line for line in plain.splitlines() if line.startswith("dset = f.create_dataset(")]
    assert "chunks" not in create


def test_h5py_code_is_offered_for_h5py_winners_only() -> None:
    for backend, offered in (("h5py", True), ("netcdf4", False), ("zarr", False)):
        listed = exports.all_exports({**settings("zlib"), "backend": backend}, TARGET)
        assert ("h5py_create_dataset" in listed) is offered, backend


def test_h5py_code_for_parallel_trials_uses_mpio_with_the_hints_and_collective_io() -> None:
    params = {**settings("zlib"), "nprocs": 4, "io": "collective"}
    code = h5py_exports.h5py_code(
        params, TARGET, hints={"romio_cb_write": "disable", "cb_nodes": 2}
    )
    assert 'driver="mpio", comm=MPI.COMM_WORLD, info=info' in code
    assert "info.Set('romio_cb_write', 'disable')" in code and "info.Set('cb_nodes', '2')" in code
    assert "with dset.collective:" in code
    compile(code, "h5py_code", "exec")
    independent = h5py_exports.h5py_code({**params, "codec": "none", "io": "independent"}, TARGET)
    assert "collective" not in independent and "info = MPI.Info.Create()" in independent


def check_file(path: Path, codec: str, chunks: list[int] | str) -> None:
    with netCDF4.Dataset(path) as nc:
        var = nc.variables[TARGET.variable]
        assert var.chunking() == chunks
        filters = var.filters()
        for key, value in FILTERS[codec].items():
            assert filters[key] == value, (key, filters)
        assert np.array_equal(var[:], sample().tas.values)


TOOLS = shutil.which("nccopy") and shutil.which("h5repack")


@pytest.mark.skipif(
    not TOOLS, reason="nccopy/h5repack not installed (apt install netcdf-bin hdf5-tools)"
)
@pytest.mark.parametrize("codec", ["zlib", "bzip2", "zstd", "blosc-lz4", "none"])
@pytest.mark.parametrize("tool", ["nccopy", "h5repack"])
def test_generated_commands_run(tool: str, codec: str, tmp_path: Path) -> None:
    import hdf5plugin

    source = tmp_path / "in.nc"
    sample().to_netcdf(source, engine="netcdf4")
    chunks = "contiguous" if codec == "none" else "2x16x16"  # 1 KiB chunks: needs -M 0
    make = netcdf4_exports.nccopy_args if tool == "nccopy" else h5py_exports.h5repack_args
    argv = [tool, *make(settings(codec, chunks), TARGET), str(source), str(tmp_path / "out.nc")]
    env = {**os.environ, "HDF5_PLUGIN_PATH": hdf5plugin.PLUGIN_PATH}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    check_file(tmp_path / "out.nc", codec, "contiguous" if codec == "none" else [2, 16, 16])
