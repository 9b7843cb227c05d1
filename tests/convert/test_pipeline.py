"""The chunk pipeline of netCDF4/HDF5 targets: the library's bytes, read back equal, resumable."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from iotune.app.apply import apply
from iotune.backends import get_backend
from iotune.convert.engines import ENGINE_ENV, choose
from iotune.convert.layout import Layout
from iotune.model.codecs import Codec
from tests.app.test_apply import run_cli, written
from tests.convert.conftest import make_cf_source
from tests.convert.test_convert import assert_same_data

SETTINGS = "chunks=8x16x16 codec=zlib level=4 shuffle=byte"


def converted(source: Path, target: Path, settings: str = SETTINGS) -> str:
    """Convert with every region verified; the report's engine line."""
    report = apply(
        None, source, target, settings=settings, verify="full", progress=False, measure=False
    )
    return report.engine  # type: ignore[union-attr]


def stored_chunks(path: Path, name: str) -> dict[tuple[int, ...], tuple[int, bytes]]:
    """Every chunk of ``name`` as HDF5 stores it: filter mask and bytes, by offset."""
    import h5py

    with h5py.File(path, "r") as fh:
        dset = fh[name]
        chunks = (dset.id.get_chunk_info(i) for i in range(dset.id.get_num_chunks()))
        return {c.chunk_offset: dset.id.read_direct_chunk(c.chunk_offset) for c in chunks}


@pytest.mark.parametrize("suffix", [".nc", ".h5"])
def test_the_pipeline_stores_the_library_bytes(
    cf_source: Path, tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    piped, serial = tmp_path / f"piped{suffix}", tmp_path / f"serial{suffix}"
    assert re.match(r"pipeline \(this process\): \d+ threads compress", converted(cf_source, piped))
    monkeypatch.setenv(ENGINE_ENV, "regions")
    assert converted(cf_source, serial).startswith("regions (this process)")
    for name in ("tas", "pr"):  # int16 with a fill value, float32; edge chunks along x
        found = stored_chunks(piped, name)
        assert len(found) == 5 * 2 * 2 and found == stored_chunks(serial, name)
    assert_same_data(cf_source, piped)  # xarray, decoded and raw, CF encodings


def test_netcdf_tools_read_the_pipeline_file(cf_source: Path, tmp_path: Path) -> None:
    import netCDF4
    import numpy as np

    target = tmp_path / "out.nc"
    converted(cf_source, target)
    header = subprocess.run(["ncdump", "-h", str(target)], capture_output=True, text=True)
    assert header.returncode == 0 and "time = UNLIMITED ; // (40 currently)" in header.stdout
    with netCDF4.Dataset(cf_source) as before, netCDF4.Dataset(target) as after:
        assert after["tas"].chunking() == [8, 16, 16] and after["tas"].filters()["shuffle"]
        for name in ("tas", "pr", "time", "time_bnds"):
            np.testing.assert_array_equal(before[name][:], after[name][:])


def test_a_codec_it_cannot_produce_is_written_serially(cf_source: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.nc"
    engine = converted(cf_source, target, "chunks=8x16x16 codec=bzip2 level=1")
    assert engine.startswith("regions (this process)")
    assert "serial: codec bzip2: the chunk pipeline does not produce its stored bytes" in engine
    assert_same_data(cf_source, target)


def test_the_engine_is_chosen_per_codec_and_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    netcdf = get_backend("netcdf4").apply_target()
    assert netcdf is not None
    zlib = Layout("netcdf4", (8, 16, 16), Codec("zlib", 4, "byte"))
    assert choose(netcdf, layout=zlib).name == "pipeline"
    lossy = Layout("netcdf4", (8, 16, 16), Codec("zlib", 4, "byte"), quantize="digits:3")
    assert "quantize digits:3: the library quantises" in choose(netcdf, layout=lossy).reason
    auto = Layout("netcdf4", "auto", Codec("zlib", 4))
    assert "chunks auto" in choose(netcdf, layout=auto).reason
    under_dask = choose(netcdf, executor="dask", layout=zlib)  # one writer, on every core
    assert under_dask.name == "pipeline" and "--executor dask does not apply" in under_dask.reason
    monkeypatch.setenv(ENGINE_ENV, "regions")
    assert choose(netcdf, layout=zlib).reason.endswith(f"serial: {ENGINE_ENV}=regions")


def test_kill_the_pipeline_then_resume(tmp_path: Path) -> None:
    source = make_cf_source(tmp_path / "source.nc", time=64)
    target = tmp_path / "out.nc"
    journal = target.with_name(target.name + ".iotune-journal")
    options = ["--settings", "chunks=4x8x8 codec=zlib level=4 shuffle=byte", "--max-mem", "60KB"]
    killed = run_cli(*options, str(source), "-o", str(target), delay=0.15)
    deadline = time.monotonic() + 60
    while len(written(journal)) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    before = written(journal)
    assert 4 <= len(before) < 16  # 64 steps in regions of 4
    again = run_cli(*options, "--resume", "--verify", "full", str(source), "-o", str(target))
    assert again.wait(60) == 0, again.stderr.read()  # type: ignore[union-attr]
    after = written(journal)
    assert sorted(after) == list(range(16)) and after[: len(before)] == before
    out = again.stdout.read()  # type: ignore[union-attr]
    assert "engine: pipeline (this process)" in out and "already written" in out
    assert_same_data(source, target)


def test_netcdf_alignment_holds_for_the_chunks_it_stores(cf_source: Path, tmp_path: Path) -> None:
    import h5py

    target = tmp_path / "out.nc"
    engine = converted(cf_source, target, f"{SETTINGS} alignment=4096")
    assert engine.startswith("pipeline")
    with h5py.File(target, "r") as fh:
        dset = fh["pr"]
        chunks = [dset.id.get_chunk_info(i) for i in range(dset.id.get_num_chunks())]
    assert len(chunks) == 20 and all(c.byte_offset % 4096 == 0 for c in chunks)
