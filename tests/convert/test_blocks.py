"""Conversions whose row of target chunks exceeds --max-mem: blocks of two dimensions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iotune.convert.convert import convert, prepare
from iotune.convert.layout import Layout
from iotune.model.codecs import Codec
from tests.convert.test_convert import DIMS, assert_same_data

# a row of 16x8x8 chunks of tas (int16) and pr (float32) over 32 x 24 cells needs
# 2 x 74 KB; 60 KB holds blocks of 16 x 8 rows of the first two dimensions
MAX_MEM = 60_000


class Stop(Exception):
    """Raised from the progress callback: an interruption after some regions."""


@pytest.mark.parametrize("backend", ["netcdf4", "zarr"])
def test_a_row_of_chunks_beyond_max_mem_converts_in_blocks(
    cf_source: Path, tmp_path: Path, backend: str
) -> None:
    layout = Layout(backend, (16, 8, 8), Codec("zlib", 3, "byte"), DIMS)
    target = tmp_path / ("out.zarr" if backend == "zarr" else "out.nc")
    job = prepare(cf_source, target, layout, max_mem=MAX_MEM)
    assert job.blocks is not None and job.blocks.second_dim == "y"
    assert [r.bounds for r in job.regions[:2]] == [((0, 16), (0, 8)), ((0, 16), (8, 16))]
    assert len(job.regions) == 3 * 4
    assert job.total_bytes == 40 * 4632  # every byte of the region variables once
    report = convert(job, verify_mode="full")
    assert report.regions_verified == 12
    assert_same_data(cf_source, target)
    lines = [json.loads(line) for line in job.journal.read_text().splitlines()]
    assert lines[0]["job"]["regions"][1] == [0, 16, 8, 16]
    assert lines[2]["bounds"] == [[0, 16], [8, 16]]


def test_blocks_resume_without_writing_a_region_twice(cf_source: Path, tmp_path: Path) -> None:
    layout = Layout("netcdf4", (16, 8, 8), Codec("zlib", 1), DIMS)
    target = tmp_path / "out.nc"
    seen: list[int] = []

    def stop_after_five(nbytes: int) -> None:
        seen.append(nbytes)
        if len(seen) == 6:  # the first call reports what an earlier run wrote
            raise Stop

    with pytest.raises(Stop):
        convert(prepare(cf_source, target, layout, max_mem=MAX_MEM), on_bytes=stop_after_five)
    assert not target.exists()
    job = prepare(cf_source, target, layout, max_mem=MAX_MEM, resume=True)
    report = convert(job, resume=True, verify_mode="full")
    assert report.regions_skipped == 5
    assert_same_data(cf_source, target)
    lines = [json.loads(line) for line in job.journal.read_text().splitlines()[1:]]
    written = [e["written"] for e in lines if "written" in e]  # the last line: "finished"
    assert sorted(written) == list(range(12))  # each region exactly once


def test_a_journal_of_other_regions_is_refused_on_resume(cf_source: Path, tmp_path: Path) -> None:
    from iotune.convert.journal import RegionJournal
    from iotune.core.errors import UsageError

    layout = Layout("netcdf4", (16, 8, 8), Codec("none"), DIMS)
    target = tmp_path / "out.nc"
    old = prepare(cf_source, target, layout, max_mem=10**6)  # rows of one dimension
    RegionJournal(old.journal, job=old.describe(), resume=False).written(0, 0, 16)
    old.partial.write_bytes(b"")
    job = prepare(cf_source, target, layout, max_mem=MAX_MEM, resume=True)
    with pytest.raises(UsageError, match="belongs to another conversion"):
        convert(job, resume=True)


def test_the_predicted_peak_of_blocks_is_two_blocks_within_max_mem(
    cf_source: Path, tmp_path: Path
) -> None:
    from iotune.convert.predict import peak_bytes

    layout = Layout("netcdf4", (16, 8, 8), Codec("zlib", 1), DIMS)
    job = prepare(cf_source, tmp_path / "out.nc", layout, max_mem=MAX_MEM)
    largest = max(job.bytes_of(r) for r in job.regions)
    assert peak_bytes(job) == 2 * largest <= MAX_MEM
