"""Two effects that bias a cold-read comparison with fio, each measured alone.

1. *Pauses between timed reads.*  One process reads a file cold in pieces of
   ``--block`` into one reused buffer, timing only the reads, with a pause after
   each piece: none, zlib's CRC-32 of the piece, CRC-32C (what iotune verifies
   with), or a sleep.  The kernel's readahead goes on during a pause, off the
   clock, so a long pause makes the timed reads look faster.
2. *fio's ``--invalidate`` inside its timed window.*  fio reads the file right
   after its own write (the pages still cached, so its ``posix_fadvise``
   has work to do), again, and after an untimed eviction.

Rounds are interleaved.  On a VM with free page reporting, pass
``--hold-page-reporting`` (root): a pause, or an eviction, lets the guest hand
freed pages back, and the next reads fault them in again (docs/benchmarks.md).
Part 2 needs ``fio``:

    .venv/bin/python benchmarks/read_pauses.py [--size 1GiB] [--block 32MiB]
        [--rounds 5] [--scratch DIR] [--hold-page-reporting]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

# a sibling script: python puts benchmarks/ first on sys.path when running this one
from fidelity import page_reporting_held

from iotune.core.units import parse_size
from iotune.measuring.checksum import checksum
from iotune.measuring.measure import evict

MiB = 2**20


def timed_read(path: Path, size: int, block: int, pause: Callable[[memoryview], object]) -> float:
    """MiB/s of the reads alone (pauses untimed), from a cold cache."""
    evict([path])
    buf = np.ones(block, np.uint8)
    view, spent = memoryview(buf), 0.0
    fd = os.open(path, os.O_RDONLY)
    try:
        for offset in range(0, size, block):
            t0 = time.perf_counter()
            os.preadv(fd, [view], offset)
            spent += time.perf_counter() - t0
            pause(view)
    finally:
        os.close(fd)
    return size / MiB / spent


def fio(path: Path, size: int, block: int, rw: str) -> float:
    cmd = ["fio", f"--filename={path}", f"--name={rw}", f"--rw={rw}", f"--size={size}"]
    cmd += [f"--bs={block}", "--ioengine=psync", "--invalidate=1", "--fadvise_hint=0"]
    cmd += ["--fallocate=none", "--output-format=json"]
    cmd += ["--end_fsync=1"] if rw == "write" else []
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["jobs"][0][rw]["bw_bytes"] / MiB


def pauses(path: Path, size: int, block: int, rounds: int) -> dict[str, list[float]]:
    with open(path, "wb") as f:
        for _ in range(size // block):
            f.write(os.urandom(block))
        os.fsync(f.fileno())
    kinds = {
        "none": lambda v: None,
        "zlib crc32": zlib.crc32,
        "crc32c": checksum,
        "sleep 30 ms": lambda v: time.sleep(0.03),
    }
    found: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(rounds):
        for name, pause in kinds.items():
            found[name].append(timed_read(path, size, block, pause))
    path.unlink()
    return found


def fio_after_write(path: Path, size: int, block: int, rounds: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {"after its write": [], "again": [], "after eviction": []}
    for _ in range(rounds):
        fio(path, size, block, "write")
        found["after its write"].append(fio(path, size, block, "read"))
        found["again"].append(fio(path, size, block, "read"))
        path.unlink()
        fio(path, size, block, "write")
        evict([path])
        found["after eviction"].append(fio(path, size, block, "read"))
        path.unlink()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1GiB")
    parser.add_argument("--block", default="32MiB")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--hold-page-reporting", action="store_true", help="as fidelity.py (root)")
    args = parser.parse_args()
    size, block = parse_size(args.size), parse_size(args.block)
    held = page_reporting_held(args.hold_page_reporting)
    with held, tempfile.TemporaryDirectory(prefix="iotune-pauses-", dir=args.scratch) as tmp:
        path = Path(tmp) / "data.bin"
        tables = {
            "timed reads with a pause after each piece": pauses(path, size, block, args.rounds)
        }
        if shutil.which("fio"):
            tables["fio read"] = fio_after_write(path, size, block, args.rounds)
    for title, found in tables.items():
        print(f"{title} ({args.size}, {args.block} pieces, {args.rounds} rounds), MiB/s:")
        for name, values in found.items():
            runs = " ".join(f"{v:.0f}" for v in values)
            print(f"  {name:<16} median {statistics.median(values):6.0f}   ({runs})")


if __name__ == "__main__":
    main()
