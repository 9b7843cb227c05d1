"""Exports of the file-level knobs: every one is run, and the result read back."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from iotune.analysis import exports
from iotune.backends.exports_base import Target
from iotune.backends.h5py import exports as h5py_exports
from iotune.backends.netcdf4 import exports as netcdf4_exports
from iotune.backends.posix import exports as posix_exports
from iotune.backends.zarr import exports as zarr_exports

TARGET = Target("tas", ("time", "lat", "lon"), (16, 64, 64), "float32")
MiB = 2**20
TOOLS = shutil.which("nccopy") and shutil.which("h5repack")


def run_python(code: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr


def test_h5py_code_sets_every_hdf5_knob(tmp_path: Path) -> None:
    settings = {"backend": "h5py", "chunks": "4x32x32", "codec": "none", "page_size": 4 * MiB}
    settings |= {"page_buffer": 8 * MiB, "meta_block_size": 64 * 1024, "libver": "latest"}
    settings |= {"fill_time": "never", "alloc_time": "incr", "sieve_buf_size": 128 * 1024}
    code = h5py_exports.h5py_code(settings, TARGET)
    run_python(f"path = 'h.h5'\n{code}\nf.close()", tmp_path)
    with h5py.File(tmp_path / "h.h5") as f:
        fcpl = f.id.get_create_plist()
        assert fcpl.get_file_space_strategy()[0] == h5py.h5f.FSPACE_STRATEGY_PAGE
        assert fcpl.get_file_space_page_size() == 4 * MiB
        dcpl = f["tas"].id.get_create_plist()
        assert dcpl.get_fill_time() == h5py.h5d.FILL_TIME_NEVER
        assert dcpl.get_alloc_time() == h5py.h5d.ALLOC_TIME_INCR
    assert "set_sieve_buf_size(131072)" in code  # the low-level calls, as a comment


def test_h5py_code_aligns(tmp_path: Path) -> None:
    settings = {"backend": "h5py", "chunks": "4x32x32", "codec": "none", "alignment": MiB}
    code = h5py_exports.h5py_code(settings, TARGET)
    run_python(f"import numpy as np\npath = 'a.h5'\n{code}\ndset[:] = 1\nf.close()", tmp_path)
    with h5py.File(tmp_path / "a.h5") as f:
        dsid = f["tas"].id
        offsets = [dsid.get_chunk_info(i).byte_offset for i in range(dsid.get_num_chunks())]
    assert offsets and all(o % MiB == 0 for o in offsets)


def test_netcdf4_code_sets_format_fill_quantize_alignment_cache(tmp_path: Path) -> None:
    settings = {"backend": "netcdf4", "chunks": "4x32x32", "codec": "zlib", "level": 1}
    settings |= {"shuffle": "byte", "fill": "off", "format": "NETCDF4_CLASSIC"}
    settings |= {"quantize": "digits:3", "alignment": MiB, "chunk_cache": 4 * MiB}
    settings |= {"cache_slots": 1009, "cache_preemption": 0.5}
    code = netcdf4_exports.netcdf4_code(settings, TARGET)
    script = "path = 'n.nc'\n" + code.replace(
        "nc = netCDF4.Dataset(path, \"w\", format='NETCDF4_CLASSIC')",
        "nc = netCDF4.Dataset(path, \"w\", format='NETCDF4_CLASSIC')\n"
        "[nc.createDimension(d, n) for d, n in (('time', 16), ('lat', 64), ('lon', 64))]",
    )
    script += (
        "\nassert var.get_var_chunk_cache()[1:] == (1009, 0.5)\nvar[:] = 1.2345678\nnc.close()"
    )
    run_python(script, tmp_path)
    import netCDF4

    with netCDF4.Dataset(tmp_path / "n.nc") as nc:
        var = nc["tas"]
        assert nc.data_model == "NETCDF4_CLASSIC"
        assert var.quantization() == (3, "GranularBitRound")
        assert var.get_fill_value() is None


@pytest.mark.skipif(not TOOLS, reason="nccopy/h5repack not installed (netcdf-bin hdf5-tools)")
def test_h5repack_and_nccopy_apply_the_file_knobs(tmp_path: Path) -> None:
    import netCDF4

    source = tmp_path / "in.nc"
    with netCDF4.Dataset(source, "w") as nc:
        for d, n in zip(TARGET.dims, TARGET.shape, strict=True):
            nc.createDimension(d, n)
        nc.createVariable("tas", "f4", TARGET.dims)[:] = 1.0
    settings = {"backend": "h5py", "chunks": "4x32x32", "codec": "none", "page_size": 4 * MiB}
    settings |= {"meta_block_size": 64 * 1024, "libver": "latest"}
    argv = ["h5repack", *h5py_exports.h5repack_args(settings, TARGET), str(source), "out.h5"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with h5py.File(tmp_path / "out.h5") as f:
        assert f.id.get_create_plist().get_file_space_page_size() == 4 * MiB
    aligned = {"backend": "h5py", "chunks": "4x32x32", "codec": "none", "alignment": MiB}
    argv = ["h5repack", *h5py_exports.h5repack_args(aligned, TARGET), str(source), "al.h5"]
    assert subprocess.run(argv, capture_output=True, cwd=tmp_path).returncode == 0
    with h5py.File(tmp_path / "al.h5") as f:
        dsid = f["tas"].id
        assert all(dsid.get_chunk_info(i).byte_offset % MiB == 0 for i in range(16))
    cdf5 = {"backend": "netcdf4", "chunks": "contiguous", "codec": "none"}
    cdf5["format"] = "NETCDF3_64BIT_DATA"
    argv = ["nccopy", *netcdf4_exports.nccopy_args(cdf5, TARGET), str(source), "out.nc"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with netCDF4.Dataset(tmp_path / "out.nc") as nc:
        assert nc.data_model == "NETCDF3_64BIT_DATA"


def test_xarray_reads_with_the_page_buffer_and_cache(tmp_path: Path) -> None:
    import xarray as xr

    settings = {"backend": "h5py", "chunks": "4x32x32", "codec": "none", "page_size": MiB}
    settings |= {"page_buffer": 4 * MiB, "chunk_cache": 2 * MiB}
    code = h5py_exports.h5py_code(settings, TARGET)
    run_python(f"path = 'x.h5'\n{code}\ndset[:] = 2\nf.close()", tmp_path)
    kwargs = h5py_exports.xarray_h5netcdf_open(settings, TARGET)
    assert kwargs["driver_kwds"]["page_buf_size"] == 4 * MiB
    with xr.open_dataset(tmp_path / "x.h5", phony_dims="sort", **kwargs) as ds:
        assert float(ds["tas"].mean()) == 2.0


def test_zarr_exports_run(tmp_path: Path) -> None:
    import zarr

    settings = {"backend": "zarr", "chunks": "4x32x32", "shards": "8x64x64", "codec": "zstd"}
    settings |= {"level": 3, "shard_index": "start", "quantize": "bitround:8"}
    settings |= {"request_concurrency": 4}
    settings |= {"write_empty_chunks": "off"}
    found = exports.all_exports(settings, TARGET)
    code = found["zarr_config"]["text"] + "\n" + found["zarr_create_array"]["text"]
    code = "store = 'z.zarr'\n" + code + "\nassert zarr.config.get('async.concurrency') == 4"
    run_python(code, tmp_path)
    arr = zarr.open_array(str(tmp_path / "z.zarr"))
    meta = arr.metadata.to_dict()
    sharding = meta["codecs"][0]["configuration"]
    assert sharding["index_location"] == "start"
    # the pick's inner chunks and codec, not zarr's defaults
    assert list(sharding["chunk_shape"]) == [4, 32, 32]
    inner = {c["name"]: c.get("configuration", {}) for c in sharding["codecs"]}
    assert inner["zstd"]["level"] == 3
    assert [f.to_dict()["configuration"]["keepbits"] for f in arr.filters] == [8]


def test_posix_exports_run(tmp_path: Path) -> None:
    settings = {"backend": "posix", "transfer_size": 2**16, "preallocate": "on"}
    settings["sync"] = "fdatasync"
    code = posix_exports.posix_code(settings)
    run_python(f"path = 'p.bin'\ntotal_bytes = {8 * MiB}\n{code}", tmp_path)
    assert (tmp_path / "p.bin").stat().st_blocks * 512 >= 8 * MiB  # preallocated
    if shutil.which("fio") is None:
        if os.environ.get("IOTUNE_REQUIRE_FIO") == "1":
            pytest.fail("fio is not installed")
        pytest.skip("fio not installed (apt install fio)")
    argv = posix_exports.fio_args(settings, TARGET)
    done = subprocess.run([*argv, "--filename=f.bin"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "f.bin").stat().st_size == int(np.prod(TARGET.shape)) * 4
    assert all(isinstance(a, str) for a in argv)  # as recommend --format json holds it


def test_xarray_encodings_carry_the_quantisation(tmp_path: Path) -> None:
    import netCDF4
    import xarray as xr
    import zarr

    data = 280 + 15 * np.random.default_rng(0).random(TARGET.shape, dtype=np.float32)
    ds = xr.Dataset({"tas": (TARGET.dims, data)})
    nc = {"backend": "netcdf4", "chunks": "4x32x32", "codec": "zlib", "level": 1}
    nc |= {"shuffle": "byte", "quantize": "bitround:9"}
    ds.to_netcdf(
        tmp_path / "q.nc",
        engine="netcdf4",
        encoding=netcdf4_exports.xarray_netcdf4_encoding(nc, TARGET),
    )
    with netCDF4.Dataset(tmp_path / "q.nc") as f:
        assert f["tas"].quantization() == (9, "BitRound")
    zs = {"backend": "zarr", "chunks": "4x32x32", "codec": "zstd", "level": 3}
    zs |= {"shuffle": "none", "quantize": "digits:3"}
    encoding = zarr_exports.xarray_zarr_encoding(zs, TARGET)
    ds.to_zarr(tmp_path / "q.zarr", zarr_format=3, encoding=encoding, consolidated=False)
    arr = zarr.open_array(str(tmp_path / "q.zarr"), path="tas")
    assert [f.to_dict()["configuration"]["keepbits"] for f in arr.filters] == [10]
    stored = arr[:]
    assert 0 < np.abs(stored - data).max() / 295 <= 2.0**-11
