"""docs/walkthrough.md run as written: every command succeeds, and what it prints is quiet.

Quiet: sizes in binary units with three significant digits (never ``30383KiB`` beside
``19.5MiB``), rates in MiB/s, no decimal units, and no raw line of a C library (HDF5,
netCDF-C, blosc) on the terminal.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
WALKTHROUGH = ROOT / "docs" / "walkthrough.md"
SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(KiB|MiB|GiB|TiB)\b")
DECIMAL = re.compile(r"\d\s?(kB|KB|MB|GB|TB)(/s)?\b")
RAW_C = re.compile(r"^(HDF5-DIAG|Blosc|NetCDF: |\s*#\d{3}:|\s*(major|minor): )")


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """The fenced blocks of the walkthrough: (language, lines)."""
    found, current, kind = [], None, ""
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                kind, current = line[3:], []
            else:
                found.append((kind, current))
                current = None
        elif current is not None:
            current.append(line)
    return found


def size_is_readable(value: str, unit: str) -> bool:
    """Three significant digits, or a whole number below 1024 of the unit."""
    digits = value.replace(".", "").lstrip("0")
    return float(value) < 1024 and (len(digits) <= 3 or "." not in value)


def check_quiet(command: str, output: str) -> None:
    for line in output.splitlines():
        assert not RAW_C.match(line), f"{command}: a C library's raw line: {line!r}"
        assert not DECIMAL.search(line), f"{command}: a decimal unit: {line!r}"
        for value, unit in SIZE.findall(line):
            assert size_is_readable(value, unit), f"{command}: {value}{unit} in {line!r}"


def test_the_walkthrough_runs_as_written_and_prints_quiet_lines(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ran = []
    for kind, lines in blocks(WALKTHROUGH.read_text()):
        if kind in ("python", "yaml"):  # a file the reader writes: its first line names it
            name = lines[0].lstrip("# ").split(":")[0]
            (tmp_path / name).write_text("\n".join(lines) + "\n")
            continue
        if kind != "console":
            continue
        words = shlex.split(lines[0].removeprefix("$ "))
        program = {"python": [sys.executable], "iotune": [sys.executable, "-m", "iotune"]}
        proc = subprocess.run(
            [*program[words[0]], *words[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"{lines[0]}: {proc.stderr}"
        check_quiet(lines[0], proc.stdout + proc.stderr)
        # what the page shows obeys the same rules (its figures came from a run like this)
        check_quiet(f"{lines[0]} (as documented)", "\n".join(lines[1:]))
        ran.append(words[:2])
    assert ["iotune", "recommend"] in ran and ["iotune", "tune"] in ran


@pytest.mark.parametrize(
    ("line", "quiet"),
    [
        ("stored 29.7MiB, ratio 1.69", True),
        ("stored 30383KiB, ratio 1.69", False),
        ("tas.nc: 100%|####| 59.3M/59.3M [00:00<00:00, 267MB/s]", False),
        ("Blosc_Filter Error: blosc_filter: Buffer is uncompressible.", False),
        ("chunks=1x90x180 chunk_cache=64MiB", True),
    ],
)
def test_the_rules_catch_what_they_are_for(line: str, quiet: bool) -> None:
    if quiet:
        check_quiet("x", line)
    else:
        with pytest.raises(AssertionError):
            check_quiet("x", line)
