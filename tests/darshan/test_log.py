from __future__ import annotations

from pathlib import Path

import pytest

from iotune.cli.main import main
from iotune.core.errors import DarshanError
from iotune.darshan_.log import open_log
from iotune.darshan_.reader import read_log
from tests.darshan.conftest import (
    CRASHER,
    EXAMPLES,
    HDF5_LOG,
    IOR_LIKE_LOG,
    MPIIO_LOG,
    PYTHON_LOG,
    flipped,
    rebuilt,
)


@pytest.mark.parametrize(
    "path",
    [*sorted(EXAMPLES.glob("*.darshan")), IOR_LIKE_LOG, PYTHON_LOG],
    ids=lambda p: p.name[:20],
)
def test_every_example_log_opens(path: Path) -> None:
    log = open_log(path)
    assert log.version.startswith("3.")
    assert log.nprocs >= 1


def test_what_the_log_says_about_the_job() -> None:
    log = open_log(HDF5_LOG)
    assert (log.nprocs, log.version, log.executable) == (4, "3.21", "ior")
    assert {"POSIX", "MPI-IO", "H5D", "LUSTRE"} <= set(log.records)


def _cli_error(path: Path, capsys, tmp_path: Path) -> str:
    assert main(["darshan", str(path), "-o", str(tmp_path / "s.yaml")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert not (tmp_path / "s.yaml").exists()
    return lines[0]


def test_truncated_log_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    cut = tmp_path / "cut.darshan"
    cut.write_bytes(MPIIO_LOG.read_bytes()[:3000])
    line = _cli_error(cut, capsys, tmp_path)
    assert line == f"iotune: error: {cut}: truncated Darshan log (3000 bytes of 11472)"


def test_header_only_is_truncated(tmp_path: Path, capsys) -> None:
    cut = tmp_path / "head.darshan"
    cut.write_bytes(MPIIO_LOG.read_bytes()[:100])
    assert "truncated Darshan log" in _cli_error(cut, capsys, tmp_path)


@pytest.mark.parametrize(
    "content", [b"", b"hello, world\n" * 50, b"\x89HDF\r\n\x1a\n" + bytes(400)]
)
def test_not_darshan_is_one_line_exit_2(tmp_path: Path, capsys, content: bytes) -> None:
    path = tmp_path / "other.darshan"
    path.write_bytes(content)
    line = _cli_error(path, capsys, tmp_path)
    assert (
        line == f"iotune: error: {path}: not a Darshan log (no Darshan magic number in its header)"
    )


def test_newer_format_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.darshan"
    path.write_bytes(b"3.99\0\0\0\0" + HDF5_LOG.read_bytes()[8:])
    with pytest.raises(DarshanError, match=r"format 3.99 is newer than this reader"):
        open_log(path)


def test_missing_file(tmp_path: Path, capsys) -> None:
    assert "no such file" in _cli_error(tmp_path / "nope.darshan", capsys, tmp_path)


def test_a_log_of_format_3_41_is_read() -> None:
    """darshan 3.5's header: a 64-bit partial flag and 64 module regions."""
    log = open_log(IOR_LIKE_LOG)
    assert (log.version, log.nprocs) == ("3.41", 4)
    assert {"POSIX", "MPI-IO"} <= set(log.records)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_crash_of_darshans_library_is_one_error(tmp_path: Path, method: str) -> None:
    """The reader's child process dies of a signal; the caller gets one line naming the log."""
    source, flip = CRASHER
    path = tmp_path / "crash.darshan"
    path.write_bytes(flipped(source, flip))
    with pytest.raises(DarshanError) as caught:
        read_log(path, method=method)  # the library itself, without the layout check
    message = str(caught.value)
    assert message.startswith(
        f"{path}: corrupt Darshan log: Darshan's C library crashed reading it (SIG"
    )
    assert "\n" not in message


def test_the_same_log_is_refused_before_the_library_sees_it(tmp_path: Path, capsys) -> None:
    source, flip = CRASHER
    path = tmp_path / "crash.darshan"
    path.write_bytes(flipped(source, flip))
    line = _cli_error(path, capsys, tmp_path)
    assert line.startswith(f"iotune: error: {path}: corrupt Darshan log: its names region does not")


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_reader_that_runs_too_long_is_stopped(method: str) -> None:
    with pytest.raises(DarshanError, match=r"did not finish reading this log within 0.001 s"):
        read_log(HDF5_LOG, timeout=0.001, method=method)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_both_children_read_the_same(method: str) -> None:
    found = read_log(HDF5_LOG, method=method)
    assert (found["nprocs"], found["modules"][:2]) == (4, ("POSIX", "MPI-IO"))
    assert set(found["records"]["H5D"]["counters"]["H5D_DATASPACE_NDIMS"]) == {1}


def _with_header(path: Path, tmp_path: Path, at: int, value: bytes) -> Path:
    data = bytearray(HDF5_LOG.read_bytes())
    data[at : at + len(value)] = value
    path = tmp_path / path
    path.write_bytes(bytes(data))
    return path


def test_unknown_compression_type(tmp_path: Path) -> None:
    path = _with_header(Path("comp.darshan"), tmp_path, 16, bytes([7]))
    with pytest.raises(
        DarshanError, match=r"compression type 7 in its header; a log has 0 \(zlib\)"
    ):
        open_log(path)


def test_a_region_past_the_end_of_the_file(tmp_path: Path) -> None:
    # a 3.21 header: the name region's offset and length at byte 24, module 0's at 40,
    # POSIX's (module 1) at 56
    path = _with_header(Path("far.darshan"), tmp_path, 56, (10**9).to_bytes(8, "little"))
    with pytest.raises(DarshanError, match=r"truncated Darshan log \(3967 bytes of 1000000219\)"):
        open_log(path)


def test_a_region_inside_the_header(tmp_path: Path) -> None:
    path = _with_header(Path("inside.darshan"), tmp_path, 56, (100).to_bytes(8, "little"))
    with pytest.raises(
        DarshanError, match=r"its POSIX region starts at byte 100 .* 360-byte header"
    ):
        open_log(path)


def test_overlapping_regions(tmp_path: Path) -> None:
    # MPI-IO (module 2, at byte 72) moved onto the POSIX region's last bytes
    posix = int.from_bytes(HDF5_LOG.read_bytes()[56:64], "little")
    path = _with_header(Path("overlap.darshan"), tmp_path, 72, (posix + 8).to_bytes(8, "little"))
    with pytest.raises(DarshanError, match=r"its POSIX and MPI-IO regions overlap"):
        open_log(path)


def test_name_records_cut_inside_a_record(tmp_path: Path) -> None:
    path = tmp_path / "names.darshan"
    path.write_bytes(rebuilt(HDF5_LOG, lambda key, data: data[:-3] if key == 0 else data))
    with pytest.raises(DarshanError, match=r"its name records stop inside a record"):
        open_log(path)


def test_a_job_region_larger_than_a_job_record(tmp_path: Path) -> None:
    path = tmp_path / "job.darshan"
    path.write_bytes(
        rebuilt(HDF5_LOG, lambda key, data: data + bytes(5000) if key == "job" else data)
    )
    with pytest.raises(DarshanError, match=r"its job region holds 7328 bytes; a job record holds"):
        open_log(path)
