"""Regions: along the first dimension, whole target chunks, within the memory limit."""

from __future__ import annotations

import json

import pytest

from iotune.convert.journal import RegionJournal
from iotune.convert.regions import COPIES, plan_blocks, plan_regions, sample
from iotune.core.errors import UsageError


def test_regions_are_whole_chunks_within_memory() -> None:
    regions = plan_regions(100, row_bytes=1000, chunk=8, max_mem=COPIES * 1000 * 20)
    assert [(r.start, r.stop) for r in regions] == [
        (0, 16),
        (16, 32),
        (32, 48),
        (48, 64),
        (64, 80),
        (80, 96),
        (96, 100),
    ]
    assert [r.index for r in regions] == list(range(7))


def test_a_row_of_chunks_beyond_memory_is_refused() -> None:
    with pytest.raises(UsageError, match="--max-mem"):
        plan_regions(100, row_bytes=1000, chunk=50, max_mem=10_000)


def test_sample_takes_first_middle_last() -> None:
    regions = plan_regions(10, row_bytes=1, chunk=1, max_mem=COPIES)
    picked = [r.index for r in sample(regions)]
    assert picked[0] == 0 and picked[-1] == 9 and len(set(picked)) == 3
    assert [r.index for r in sample(regions[:2])] == [0, 1]


def test_journal_resumes_only_the_same_job(tmp_path) -> None:
    path = tmp_path / "j"
    journal = RegionJournal(path, job={"a": 1}, resume=False)
    journal.written(0, 0, 8)
    with path.open("a") as fh:
        fh.write('{"written": 1, "sta')  # torn by a crash: that region is written again
    again = RegionJournal(path, job={"a": 1}, resume=True)
    assert again.done == {0}
    with pytest.raises(UsageError, match="another conversion"):
        RegionJournal(path, job={"a": 2}, resume=True)
    fresh = RegionJournal(path, job={"a": 2}, resume=False)
    assert fresh.done == set()
    assert json.loads(path.read_text().splitlines()[0])["job"] == {"a": 2}


def test_blocks_over_two_dimensions_are_whole_chunks_within_memory() -> None:
    # a row of chunks (8 x 20 cells of 10 B) needs 2 x 1600 B: beyond 1000 B
    regions = plan_blocks(
        (20, 20), cell_bytes=10, rest_bytes=4, chunks=(8, 3), max_mem=COPIES * 600
    )
    assert [r.bounds for r in regions[:3]] == [
        ((0, 8), (0, 6)),
        ((0, 8), (6, 12)),
        ((0, 8), (12, 18)),
    ]
    assert regions[3].bounds == ((0, 8), (18, 20))
    assert regions[-1].bounds == ((16, 20), (18, 20))
    assert len(regions) == 3 * 4 and [r.index for r in regions] == list(range(12))
    for r in regions:  # whole chunks, within the limit
        (a, b), (lo, hi) = r.bounds
        assert a % 8 == 0 and lo % 3 == 0 and (hi % 3 == 0 or hi == 20)
        assert COPIES * (10 * (b - a) * (hi - lo) + 4 * (b - a)) <= COPIES * 600
    cells = {(i, j) for r in regions for i in range(*r.bounds[0]) for j in range(*r.bounds[1])}
    assert len(cells) == 400  # every cell once
    assert regions[1].label() == "rows 0-8 x 6-12"


def test_a_column_of_chunks_beyond_memory_is_refused() -> None:
    with pytest.raises(UsageError, match=r"--max-mem .*one chunk along the first two"):
        plan_blocks((20, 20), cell_bytes=10, rest_bytes=0, chunks=(8, 8), max_mem=1000)


def test_journal_records_the_bounds_of_blocks(tmp_path) -> None:
    path = tmp_path / "j"
    journal = RegionJournal(path, job={"a": 1}, resume=False)
    journal.written(0, 0, 8, ((6, 12),))
    journal.written(1, 8, 16)
    entries = journal.entries()
    assert entries[0]["bounds"] == [[0, 8], [6, 12]] and "bounds" not in entries[1]
    assert RegionJournal(path, job={"a": 1}, resume=True).done == {0, 1}
