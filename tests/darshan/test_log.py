from __future__ import annotations

from pathlib import Path

import pytest

from iotune.cli import main
from iotune.darshan_.log import open_log
from iotune.errors import DarshanError
from tests.darshan.conftest import EXAMPLES, HDF5_LOG, MPIIO_LOG


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.darshan")), ids=lambda p: p.name[:20])
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
