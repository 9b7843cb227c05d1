"""File-level knobs: each written for real, then read back from the file by another reader."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import h5py
import pytest

from iotune.backends.h5py.backend import H5pyBackend
from iotune.backends.netcdf4.backend import NetCDF4Backend
from iotune.backends.zarr.backend import ZarrBackend
from iotune.core.errors import NotApplicable, VerificationError
from iotune.measuring.data import Field
from iotune.model.spec import Workload

W = Workload(("time", "y", "x"), (16, 128, 128), "float32")
MiB = 2**20
BASE = {"chunks": "4x64x64", "codec": "none", "level": None, "shuffle": "none"}


def write(backend, path: Path, params: dict) -> dict:
    """Write the workload as a trial does, return what verify read back."""
    effective, _ = type(backend).resolve(params, W)
    writer = backend.open_writer(path, W, effective)
    for start, slab in Field(W).slabs(4):
        writer.write(start, slab)
    writer.close()
    return backend.verify(path, effective)


def h5_facts(path: Path, dataset: str) -> dict:
    """Read the file in a fresh interpreter: netCDF4's HDF5 and h5py's differ."""
    script = f"""
import h5py, json
with h5py.File({str(path)!r}) as f:
    d = f[{dataset!r}]; dsid = d.id
    fcpl = f.id.get_create_plist()
    print(json.dumps({{
        "offsets": [dsid.get_chunk_info(i).byte_offset for i in range(dsid.get_num_chunks())],
        "strategy": fcpl.get_file_space_strategy()[0],
        "page": fcpl.get_file_space_page_size(),
        "fill_time": d.id.get_create_plist().get_fill_time(),
    }}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("backend", [H5pyBackend, NetCDF4Backend])
def test_alignment_puts_every_chunk_on_a_1MiB_boundary(backend, tmp_path: Path) -> None:
    path = tmp_path / "a.h5"
    stored = write(backend(), path, {**BASE, "alignment": MiB})
    offsets = h5_facts(path, "data")["offsets"]
    assert len(offsets) == 16 and all(o % MiB == 0 for o in offsets)
    assert stored["alignment"] == MiB  # from the library that wrote it
    # without the knob the 64 KiB chunks pack together
    write(backend(), path, dict(BASE))
    assert any(o % MiB for o in h5_facts(path, "data")["offsets"])


def test_page_size_is_read_back_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "p.h5"
    stored = write(H5pyBackend(), path, {**BASE, "page_size": 4 * MiB, "page_buffer": 8 * MiB})
    facts = h5_facts(path, "data")
    assert facts["strategy"] == h5py.h5f.FSPACE_STRATEGY_PAGE and facts["page"] == 4 * MiB
    assert stored["file_space_strategy"] == "page" and stored["page_buffer"] == 8 * MiB


def test_fill_off_is_read_back_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "f.nc"
    assert write(NetCDF4Backend(), path, {**BASE, "fill": "off"})["fill"] == "off"
    assert h5_facts(path, "data")["fill_time"] == h5py.h5d.FILL_TIME_NEVER
    assert write(NetCDF4Backend(), path, {**BASE, "fill": "on"})["fill"] == "on"
    assert h5_facts(path, "data")["fill_time"] == h5py.h5d.FILL_TIME_IFSET
    h5 = tmp_path / "f.h5"
    stored = write(H5pyBackend(), h5, {**BASE, "fill_time": "never", "alloc_time": "incr"})
    assert (stored["fill_time"], stored["alloc_time"]) == ("never", "incr")


def test_hdf5_access_properties_are_what_the_library_applied(tmp_path: Path) -> None:
    params = {**BASE, "meta_block_size": 64 * 1024, "sieve_buf_size": 256 * 1024}
    params |= {"libver": "latest", "chunk_cache": 8 * MiB, "cache_preemption": 0.5}
    stored = write(H5pyBackend(), tmp_path / "m.h5", params)
    assert stored["meta_block_size"] == 64 * 1024 and stored["sieve_buf_size"] == 256 * 1024
    assert stored["libver"] == "latest..latest" and stored["cache_preemption"] == 0.5
    # without cache_slots: a prime near 100 x the 128 chunks of 64 KiB that 8 MiB holds
    assert stored["cache_slots"] == 12809


def test_a_library_that_ignores_alignment_fails_the_trial(tmp_path: Path) -> None:
    # measured: early allocation with the latest format places all chunks as one block
    params = {**BASE, "alignment": MiB, "alloc_time": "early", "libver": "latest"}
    with pytest.raises(VerificationError, match="did not align"):
        write(H5pyBackend(), tmp_path / "e.h5", params)


@pytest.mark.parametrize(
    ("backend", "params", "why"),
    [
        (H5pyBackend, {"alignment": MiB, "page_size": 4 * MiB}, "paged file"),
        (H5pyBackend, {"page_buffer": 8 * MiB}, "needs page_size"),
        (H5pyBackend, {"page_size": 4 * MiB, "page_buffer": 6 * MiB}, "not a multiple"),
        (NetCDF4Backend, {"format": "NETCDF3_64BIT_DATA"}, "stores no chunks"),
        (
            NetCDF4Backend,
            {"format": "NETCDF3_64BIT_DATA", "chunks": "contiguous", "quantize": "digits:3"},
            "only netCDF-4",
        ),
        (ZarrBackend, {"quantize": "bitgroom:3"}, "only in netCDF-C"),
        (ZarrBackend, {"quantize": "bitround:30"}, "only 23 bits"),
    ],
)
def test_knobs_a_format_cannot_express_do_not_apply(backend, params, why) -> None:
    with pytest.raises(NotApplicable, match=why):
        backend.resolve({**BASE, **params}, W)


@pytest.mark.parametrize("backend", [NetCDF4Backend, ZarrBackend])
@pytest.mark.parametrize("label", ["bitround:7", "digits:3"])
def test_quantised_values_carry_the_error_they_should(backend, label, tmp_path) -> None:
    from iotune.model.quantize import ErrorMeter

    params = {**BASE, "quantize": label, "shards": "none"}
    path = tmp_path / f"q{backend.suffix}"
    assert write(backend(), path, params)["quantize"] == label
    effective, _ = backend.resolve(params, W)
    reader = backend().open_reader(path, W, effective)
    meter = ErrorMeter()
    meter.update(Field(W).slab(0, 16), reader.read((slice(0, 16),)))
    reader.close()
    found = meter.result()
    assert found["max_rel_error"] > 0  # lossy for real
    mode, keep = label.split(":")
    if mode == "bitround":  # rounding to nearest keeps half a unit in the last bit
        assert found["max_rel_error"] <= 2.0 ** -(int(keep) + 1)
    else:
        assert found["digits_kept"] >= int(keep) - 1


def test_zarr_shard_index_and_empty_chunks_are_in_the_store(tmp_path: Path) -> None:
    params = {**BASE, "shards": "8x128x128", "shard_index": "start"}
    params |= {"write_empty_chunks": "off", "request_concurrency": 4}
    stored = write(ZarrBackend(), tmp_path / "z.zarr", params)
    meta = json.loads((tmp_path / "z.zarr" / "data" / "zarr.json").read_text())
    (sharding,) = [c for c in meta["codecs"] if c["name"] == "sharding_indexed"]
    assert sharding["configuration"]["index_location"] == "start"
    assert stored["shard_index"] == "start" and stored["write_empty_chunks"] == "off"
    assert stored["request_concurrency"] == 4
    assert "max_abs_error" not in stored  # nothing quantised, nothing measured as lost
