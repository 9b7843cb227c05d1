"""``iotune apply``'s report in iotune's words, and ``--resume`` of an apply that finished."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

import pytest

from iotune.cli.main import main
from tests.app.test_apply import run_cli
from tests.convert.conftest import make_cf_source

#: one pattern measured after: the phase a kill interrupts
FAST = ("--no-progress", "--patterns", "timeseries")
#: what the libraries call things, never shown to the user
LIBRARY_WORDS = ("ZstdCodec", "shuffle+deflate", "file_space_page_size", "+shuffle", "filter")

CASES = {
    "out.zarr": (
        "chunks=4x8x8 shards=8x16x8 codec=zstd level=4",
        [
            "  tas: chunks 1x16x8 -> 4x8x8, codec zlib 1 + shuffle -> zstd 4 in shards of 8x16x8",
            "  pr: chunks 1x16x8 -> 4x8x8, codec none -> zstd 4 in shards of 8x16x8",
        ],
    ),
    "out.nc": (
        "chunks=4x8x8 codec=zlib level=4 shuffle=byte",
        [
            "  tas: chunks 1x16x8 -> 4x8x8, codec zlib 1 + shuffle -> zlib 4 + shuffle",
            "  pr: chunks 1x16x8 -> 4x8x8, codec none -> zlib 4 + shuffle",
        ],
    ),
    "out.h5": (
        "chunks=4x8x8 codec=zstd level=4 page_size=1MiB",
        [
            "  tas: chunks 1x16x8 -> 4x8x8, codec zlib 1 + shuffle -> zstd 4",
            "  pr: chunks 1x16x8 -> 4x8x8, codec none -> zstd 4",
            "  HDF5 file: page_size 1MiB",  # the library's defaults (alignment 1, ...) unsaid
        ],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_report_names_codecs_and_knobs_as_a_spec_does(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings, expected = CASES[name]
    source = make_cf_source(tmp_path / "source.nc", time=16, y=16, x=8)
    target = tmp_path / name
    args = ["--settings", settings, "--no-progress", "--no-measure", str(source), "-o", str(target)]
    assert main(["apply", *args]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for line in expected:
        assert line in lines, out
    # the readers' warnings name the plugin as its users know it (filter id included)
    described = [line for line in lines if not line.strip().startswith(("warning:", "(--"))]
    assert not [w for w in LIBRARY_WORDS if w in "\n".join(described)], out
    shown = "\n".join(line for line in described if str(tmp_path) not in line)
    assert not re.search(r"\b\d{4,}\b", shown), out  # no raw byte counts: sizes in KiB, MiB


def kill_while_measuring_after(source: Path, target: Path, settings: str) -> None:
    """Start an apply and SIGKILL it once its target is verified and renamed into place."""
    journal = target.with_name(target.name + ".iotune-journal")
    running = run_cli("--settings", settings, *FAST, str(source), "-o", str(target))
    deadline = time.monotonic() + 60
    # the journal's last line is written once the target has its name: measuring starts
    while time.monotonic() < deadline and b'"finished"' not in _last_line(journal):
        time.sleep(0.005)
    running.send_signal(signal.SIGKILL)
    assert running.wait(10) == -signal.SIGKILL
    assert target.exists()


def _last_line(path: Path) -> bytes:
    return path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1] if path.exists() else b""


def test_resume_after_a_kill_while_measuring_after_finishes_the_measurement(
    tmp_path: Path,
) -> None:
    source = make_cf_source(tmp_path / "source.nc", time=16, y=16, x=8)
    target = tmp_path / "out.nc"
    settings = "chunks=4x8x8 codec=zlib level=2"
    kill_while_measuring_after(source, target, settings)
    record = target.with_name(target.name + ".iotune-apply.json")
    assert not record.exists()  # killed before the measurements were kept
    options = ["--settings", settings, *FAST, "--resume", str(source), "-o", str(target)]
    again = run_cli(*options)
    assert again.wait(60) == 0, again.stderr.read()  # type: ignore[union-attr]
    out = again.stdout.read()  # type: ignore[union-attr]
    assert out.splitlines()[0] == (
        f"{target}: the conversion finished and was verified; measured after now"
    )
    assert "measured after (" in out
    kept = json.loads(record.read_text())
    assert set(kept["patterns"]) == {"timeseries"}
    written = target.stat().st_mtime_ns, record.stat().st_mtime_ns
    # everything done: said so, nothing done again
    done = run_cli(*options)
    assert done.wait(60) == 0, done.stderr.read()  # type: ignore[union-attr]
    out = done.stdout.read()  # type: ignore[union-attr]
    assert out.splitlines()[0] == (
        f"{target}: the conversion finished and was verified, and measured after; nothing to do"
    )
    assert (target.stat().st_mtime_ns, record.stat().st_mtime_ns) == written


def test_resume_refuses_a_target_iotune_did_not_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_cf_source(tmp_path / "source.nc", time=16, y=16, x=8)
    target = make_cf_source(tmp_path / "theirs.nc", time=4)
    before = target.read_bytes()
    args = ["--settings", "chunks=4x8x8", "--resume", str(source), "-o", str(target)]
    assert main(["apply", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pass --overwrite" in err, err
    assert target.read_bytes() == before
