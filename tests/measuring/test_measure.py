import os

import pytest

from iotune.measuring import measure


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "blob"
    path.write_bytes(os.urandom(8 * 2**20))
    return path


def test_written_file_is_resident_then_evicted_then_resident_after_read(data_file):
    assert measure.resident_fraction([data_file]) > 0.9
    measure.fsync_paths([data_file])
    measure.evict([data_file])
    assert measure.resident_fraction([data_file]) <= 0.05
    data_file.read_bytes()
    assert measure.resident_fraction([data_file]) > 0.95


def test_partial_read_gives_partial_residency(data_file):
    measure.evict([data_file])
    with data_file.open("rb") as fh:
        os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_RANDOM)  # no readahead
        fh.read(2 * 2**20)
    fraction = measure.resident_fraction([data_file])
    assert 0.2 <= fraction <= 0.3


def test_evict_also_drops_pages_that_were_dirty(tmp_path):
    path = tmp_path / "dirty"
    path.write_bytes(os.urandom(2**20))  # not synced
    measure.evict([path])
    assert measure.resident_fraction([path]) <= 0.05


def test_empty_and_several_files(tmp_path):
    empty = tmp_path / "empty"
    empty.touch()
    assert measure.resident_pages(empty) == (0, 0)
    assert measure.resident_fraction([]) == 0.0
    assert measure.resident_fraction([empty]) == 0.0


def test_stopwatch_accumulates_wall_and_cpu():
    clock = measure.Stopwatch()
    with clock:
        sum(range(200_000))
    first = clock.wall
    with clock:
        sum(range(200_000))
    assert clock.wall > first > 0
    assert clock.cpu > 0


def test_open_files_under_lists_what_this_process_still_holds(tmp_path):
    from iotune.measuring.measure import open_files_under

    inside, outside = tmp_path / "in", tmp_path.parent / f"{tmp_path.name}-out.bin"
    inside.mkdir()
    held = open(inside / "held.bin", "wb")  # noqa: SIM115 - kept open on purpose
    try:
        with open(outside, "wb"):
            assert open_files_under(inside) == [str((inside / "held.bin").resolve())]
        (inside / "held.bin").unlink()  # deleted but open: its space is not freed
        assert open_files_under(inside) == [str((inside / "held.bin").resolve())]
    finally:
        held.close()
        outside.unlink()
    assert open_files_under(inside) == []
