"""HDF5 targets through h5netcdf over h5py, with the recommendation's file-level knobs."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import netCDF4
import pytest
import yaml

from iotune.app import api
from iotune.backends.hdf5_family import check_alignment, dataset_properties, file_space
from iotune.cli.main import main
from iotune.convert.convert import convert, prepare
from iotune.convert.layout import layout_of
from tests.convert.conftest import make_cf_source
from tests.convert.test_convert import assert_same_data

SWEEP = {
    "version": 1,
    "name": "apply-h5",
    "backend": "h5py",
    "workload": {"shape": {"time": 64, "y": 128, "x": 128}, "dtype": "int16"},
    "parameters": {
        "chunks": [[64, 16, 16], [1, 128, 128]],
        "codec": ["zstd"],
        "page_size": ["64KiB"],
        "meta_block_size": ["64KiB"],
        "libver": ["latest"],
    },
    "read": {"patterns": ["spatial", "timeseries"], "timeseries": {"pixels": 4}},
    "measure": {"repeats": 2},
}


@pytest.fixture(scope="module")
def h5_results(tmp_path_factory) -> Path:
    """A real h5py sweep whose winner carries file-level knobs."""
    where = tmp_path_factory.mktemp("sweep-h5py")
    (where / "spec.yaml").write_text(yaml.safe_dump(SWEEP, sort_keys=False))
    api.run(where / "spec.yaml", out=where / "results", progress=False)
    return where / "results"


def test_an_h5py_recommendation_is_written_with_its_file_knobs(
    h5_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_cf_source(tmp_path / "source.nc")
    target = tmp_path / "out.h5"
    args = ["--objective", "read:timeseries", "--verify", "full", "--format", "json"]
    assert main(["apply", str(h5_results), str(source), "-o", str(target), *args]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["settings"] == (
        "backend=h5py chunks=64x16x16 codec=zstd level=4 "
        "meta_block_size=64KiB libver=latest page_size=64KiB"
    )
    assert report["file_properties"]["page_size"] == 65536  # by knob name: a paged file
    assert report["file_properties"]["meta_block_size"] == 65536
    assert_same_data(source, target)  # netCDF-C reads it: values, attributes, CF encodings
    with h5py.File(target, "r") as fh:  # read back from the file itself
        assert file_space(fh) == {"file_space_strategy": "page", "file_space_page_size": 65536}
        tas = fh["tas"]
        assert tas.chunks == (40, 16, 16)  # 64 clipped to the 40 steps of the source
        plist = tas.id.get_create_plist()
        assert [plist.get_filter(i)[0] for i in range(plist.get_nfilters())] == [32015]  # zstd
        assert fh["y"].chunks is None  # not converted: its own (contiguous) storage
    with netCDF4.Dataset(target) as nc:
        assert nc["tas"].chunking() == [40, 16, 16] and nc["tas"].filters()["zstd"]
        assert nc.dimensions["time"].isunlimited()


def test_settings_write_h5netcdf_with_alignment_and_a_chunk_cache(tmp_path: Path) -> None:
    source = make_cf_source(tmp_path / "source.nc")
    target = tmp_path / "out.nc"
    settings = {
        "backend": "h5py",
        "chunks": "8x16x8",
        "codec": "zlib",
        "level": 2,
        "shuffle": "byte",
        "alignment": 4096,
        "alignment_threshold": 1024,
        "chunk_cache": 2**20,
        "libver": "v112",
    }
    job = prepare(source, target, layout_of(settings), max_mem=200_000)
    report = convert(job, verify_mode="full")
    assert_same_data(source, target)
    assert report.file_properties is not None
    assert report.file_properties["alignment"] == 4096
    # a reader's setting, not the file's: named with the line that sets it
    assert "chunk_cache" not in report.file_properties
    said = layout_of(settings).reading_lines()
    assert said[0] == "set when reading (not stored in the file): chunk_cache 1MiB"
    assert report.file_properties["libver"].startswith("v112")
    with h5py.File(target, "r") as fh:
        assert fh["pr"].chunks == (8, 16, 8)
        assert fh["pr"].compression == "gzip" and fh["pr"].shuffle
        assert check_alignment(fh["pr"], 1024, 4096) > 0  # every chunk on a 4 KiB boundary


def test_an_interrupted_h5_target_resumes(tmp_path: Path) -> None:
    source = make_cf_source(tmp_path / "source.nc")
    target = tmp_path / "out.h5"
    layout = layout_of({"backend": "h5py", "chunks": "4x8x8", "page_size": "8KiB"})
    job = prepare(source, target, layout, max_mem=60_000)
    seen = []

    def stop(nbytes: int) -> None:
        seen.append(nbytes)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        convert(job, on_bytes=stop)
    again = prepare(source, target, layout, max_mem=60_000, resume=True)
    report = convert(again, resume=True, verify_mode="full")
    assert report.regions_skipped == 2
    assert_same_data(source, target)
    with h5py.File(target, "r") as fh:
        assert file_space(fh)["file_space_page_size"] == 8192


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            "chunks=8x8x8 page_size=64KiB alignment=4096",
            "backend h5py: alignment: a paged file (page_size) aligns to its pages instead",
        ),
        (
            "chunks=8x8x8 backend=netcdf4 page_size=64KiB",
            "--settings: 'page_size' is not a knob of netcdf4; KEY one of backend, chunks",
        ),
        (
            "chunks=8x8x8 quantize=bitround:6",
            "--settings: 'quantize' is not a knob of h5py; KEY one of backend, chunks",
        ),
        ("chunks=8x8x8 page_size=100", "page_size: 100 is smaller than 512 bytes"),
        ("chunks=contiguous codec=zlib", "chunks: contiguous storage cannot be compressed in HDF5"),
    ],
)
def test_bad_hdf5_settings_exit_2_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], settings: str, message: str
) -> None:
    source = make_cf_source(tmp_path / "source.nc")
    args = ["--settings", settings, "--variables", "pr", str(source), "-o"]
    assert main(["apply", *args, str(tmp_path / "out.h5")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source.nc"]


def test_a_glob_of_files_and_a_static_field_to_contiguous_hdf5(tmp_path: Path) -> None:
    """Several sources, a variable copied by blocks and contiguous storage, in one HDF5 file."""
    from tests.convert.test_sources import split

    whole = make_cf_source(tmp_path / "whole.nc", time=40)
    with netCDF4.Dataset(whole, "a") as nc:
        nc.createVariable("orog", "f8", ("y", "x"))[:] = 1.5
    parts = split(whole, tmp_path, [(0, 25), (25, 40)])
    target = tmp_path / "out.h5"
    layout = layout_of({"backend": "h5py", "chunks": "contiguous", "fill_time": "never"})
    job = prepare(parts, target, layout, variables=["tas", "pr"], max_mem=10_000)
    assert len(job.whole_blocks["orog"]) > 1
    convert(job, verify_mode="full")
    assert_same_data(whole, target)
    with h5py.File(target, "r") as fh:
        assert fh["orog"].chunks is None and fh["x"].chunks is None
        assert dataset_properties(fh["pr"])["fill_time"] == "never"
