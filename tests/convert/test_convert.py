"""Conversions of a CF netCDF file with map chunks to time-series chunks, netCDF4 and Zarr."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from iotune.convert.convert import convert, prepare
from iotune.convert.layout import Layout, layout_of
from iotune.core.errors import UsageError
from iotune.model.codecs import Codec

CF_KEYS = ("_FillValue", "scale_factor", "add_offset", "units", "calendar", "dtype")
DIMS = ("time", "y", "x")


def opened(path: Path) -> xr.Dataset:
    if path.suffix == ".zarr":
        return xr.open_zarr(path, consolidated=False).load()
    with xr.open_dataset(path) as ds:
        return ds.load()


def assert_same_data(source: Path, target: Path) -> None:
    """Decoded values, coordinates, attributes and the CF encodings are the source's."""
    before, after = opened(source), opened(target)
    xr.testing.assert_identical(before, after)
    for name, var in before.variables.items():
        for key in CF_KEYS:
            assert var.encoding.get(key) == after[name].encoding.get(key), (name, key)
    packed = xr.open_dataset(
        target, decode_cf=False, engine="zarr" if target.suffix == ".zarr" else "netcdf4"
    )
    assert packed["tas"].dtype == np.int16  # the stored values, not the decoded ones
    assert int(packed["tas"][0, 0, 0]) == -999


@pytest.mark.parametrize("backend", ["netcdf4", "zarr"])
def test_map_chunks_become_time_series_chunks(cf_source: Path, tmp_path: Path, backend) -> None:
    layout = Layout(backend, (16, 8, 8), Codec("zlib", 3, "byte"), DIMS)
    target = tmp_path / ("out.zarr" if backend == "zarr" else "out.nc")
    job = prepare(cf_source, target, layout, max_mem=200_000)
    assert len(job.regions) == 3  # 40 steps in regions of 16 rows
    report = convert(job, verify_mode="full")
    assert_same_data(cf_source, target)
    assert not job.partial.exists()
    assert report.regions_verified == 3
    assert [v["name"] for v in report.variables] == ["tas", "pr"]
    assert report.variables[0]["chunks_before"] == "1x32x24"
    if backend == "netcdf4":
        import netCDF4

        with netCDF4.Dataset(target) as nc:
            assert nc["tas"].chunking() == [16, 8, 8]
            assert nc["tas"].filters()["zlib"] and nc["tas"].filters()["complevel"] == 3
            assert nc["tas"].filters()["shuffle"]
            assert nc.dimensions["time"].isunlimited()
            assert nc["y"].chunking() == "contiguous"  # not converted: its own storage
    else:
        import zarr

        array = zarr.open_array(target / "tas", mode="r")
        assert array.chunks == (16, 8, 8)
        names = [type(c).__name__ for c in array.compressors]
        assert names == ["Shuffle", "Zlib"] and array.compressors[1].codec_config["level"] == 3
    lines = [json.loads(line) for line in job.journal.read_text().splitlines()[1:]]
    assert [line["written"] for line in lines[:-1]] == [0, 1, 2]
    assert lines[-1]["finished"]["regions"] == 3  # verified and renamed: the report kept


def test_chunk_lengths_beyond_the_source_are_clipped(cf_source: Path, tmp_path: Path) -> None:
    layout = layout_of({"chunks": "64x64x64"}, dims=DIMS)
    job = prepare(cf_source, tmp_path / "out.nc", layout)
    report = convert(job, verify_mode="sample")
    assert report.variables[0]["chunks_after"] == "40x32x24"


def test_an_existing_target_is_refused_unless_overwrite(cf_source: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.nc"
    target.write_text("mine")
    layout = layout_of({"chunks": "8x8x8"}, dims=DIMS)
    with pytest.raises(UsageError, match="exists"):
        prepare(cf_source, target, layout)
    job = prepare(cf_source, target, layout, overwrite=True)
    convert(job, overwrite=True)
    assert_same_data(cf_source, target)


@pytest.mark.parametrize(
    ("settings", "dims", "match"),
    [
        ({"chunks": "8x8x8"}, ("time", "lat", "lon"), "no variable of the source"),
        ({"chunks": "8x8x8", "quantize": "bitround:10"}, DIMS, "does not apply to dtype int16"),
    ],
)
def test_bad_inputs_create_nothing(cf_source: Path, tmp_path: Path, settings, dims, match) -> None:
    before = sorted(tmp_path.iterdir())
    with pytest.raises(UsageError, match=match):
        prepare(cf_source, tmp_path / "out.nc", layout_of(settings, dims=dims))
    assert sorted(tmp_path.iterdir()) == before


def test_an_unreadable_source_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.nc"
    bad.write_text("not netCDF")
    with pytest.raises(UsageError, match="not a readable"):
        prepare(bad, tmp_path / "out.nc", layout_of({"chunks": "8x8x8"}, dims=DIMS))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.nc"]


def test_a_zarr_source_converts_to_netcdf(cf_source: Path, tmp_path: Path) -> None:
    middle = tmp_path / "middle.zarr"
    convert(prepare(cf_source, middle, Layout("zarr", (4, 32, 24), Codec("none"), DIMS)))
    target = tmp_path / "out.nc"
    convert(prepare(middle, target, Layout("netcdf4", (40, 4, 4), Codec("zlib", 1), DIMS)))
    assert_same_data(cf_source, target)


def test_a_torn_partial_file_is_written_again(cf_source: Path, tmp_path: Path) -> None:
    from iotune.convert.journal import RegionJournal

    target = tmp_path / "out.nc"
    job = prepare(cf_source, target, layout_of({"chunks": "4x8x8"}, dims=DIMS), max_mem=60_000)
    RegionJournal(job.journal, job=job.describe(), resume=False).written(0, 0, 4)
    job.partial.write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(100))  # what a crash may leave
    report = convert(job, resume=True, verify_mode="full")
    assert report.regions_skipped == 0
    assert_same_data(cf_source, target)


def test_too_little_room_is_refused_before_writing(cf_source: Path, tmpfs) -> None:
    small = tmpfs("64k")  # the uncompressed target needs about 200 KiB
    with pytest.raises(UsageError, match="free"):
        prepare(cf_source, small / "out.nc", layout_of({"chunks": "8x8x8"}, dims=DIMS))
    assert list(small.iterdir()) == []


def test_zarr_shards_are_written(cf_source: Path, tmp_path: Path) -> None:
    import zarr

    settings = {"backend": "zarr", "chunks": "8x8x8", "shards": "16x16x64", "codec": "zstd"}
    target = tmp_path / "out.zarr"
    job = prepare(cf_source, target, layout_of(settings, dims=DIMS), max_mem=200_000)
    assert [(r.start, r.stop) for r in job.regions] == [(0, 16), (16, 32), (32, 40)]
    report = convert(job, verify_mode="full")
    assert_same_data(cf_source, target)
    array = zarr.open_array(target / "tas", mode="r")
    assert array.chunks == (8, 8, 8) and array.shards == (16, 16, 24)  # x: 3 chunks cover 24
    assert report.variables[0]["codec_after"] == "zstd 4 in shards of 16x16x24"


def test_shards_must_hold_whole_chunks() -> None:
    with pytest.raises(UsageError, match="not a multiple"):
        layout_of({"backend": "zarr", "chunks": "8x8x8", "shards": "12x8x8"}, dims=DIMS)
    with pytest.raises(UsageError, match="shards: not a knob of backend netcdf4; its knobs: "):
        layout_of({"chunks": "8x8x8", "shards": "16x8x8"}, dims=DIMS)
