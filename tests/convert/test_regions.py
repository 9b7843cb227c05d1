"""Regions: along the first dimension, whole target chunks, within the memory limit."""

from __future__ import annotations

import json

import pytest

from iotune.convert.journal import RegionJournal
from iotune.convert.regions import COPIES, plan_regions, sample
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
