"""Fidelity: the ``posix`` backend's sequential write and cold read against fio.

Both tools move the same file size in the same transfer size, buffered, on the
same file system, and are timed the same way:

- write: open, ``pwrite`` in ``--block`` pieces, close and ``fsync``
  (fio ``--rw=write --ioengine=psync --end_fsync=1``; fio counts the final
  fsync in its runtime, as iotune does);
- neither preallocates the file nor hints the kernel (fio's defaults
  ``--fallocate=native`` and ``--fadvise_hint=1`` would);
- cold read: the file's pages are dropped first (iotune: ``posix_fadvise``
  ``DONTNEED``, verified with ``mincore``; fio: ``--invalidate=1``, the same
  fadvise), then ``pread`` in ``--block`` pieces from start to end (iotune's
  ``full`` pattern; fio ``--rw=read --ioengine=psync``).

Runs are interleaved, iotune then fio, ``--pairs`` times after one untimed
warm-up of each, and each pair gives a ratio iotune/fio.  A ratio of 1 means
iotune reports what fio reports; the target is at least 0.95.  Run:

    .venv/bin/python benchmarks/fidelity.py [--size 1GiB] [--block 1MiB] [--pairs 7]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from iotune.spec.parse import load_spec_text
from iotune.trials.plan import make_plan
from iotune.trials.provenance import free_page_reporting
from iotune.trials.records import TrialTask
from iotune.trials.trial import run_trial
from iotune.units import format_size, parse_size

MiB = 2**20
PLANE = {"y": 512, "x": 1024}  # int16: one time step is 1 MiB

SPEC = """
version: 1
name: fidelity
workload: {{shape: {{time: {steps}, y: 512, x: 1024}}, dtype: int16, field: random}}
backend: posix
parameters: {{transfer_size: {block}}}
read: {{patterns: [full]}}
measure: {{repeats: 1, cache: cold, fsync: true}}
"""


def iotune_pass(scratch: Path, size: int, block: int) -> dict[str, float]:
    """One write and one cold full read through iotune's trial path (posix backend)."""
    sweep = load_spec_text(SPEC.format(steps=size // MiB, block=block))
    (trial,) = make_plan(sweep).trials
    result = run_trial(TrialTask(trial, sweep.workload, sweep.read, sweep.measure, str(scratch)))
    if result.status != "ok":
        raise RuntimeError(f"iotune trial failed: {result.error}")
    (read,) = result.reads["full"]
    return {
        "write": result.write[0]["MiBps"],
        "read": read["MiBps"],
        "residency": read["resident_fraction"],
    }


def fio_pass(scratch: Path, size: int, block: int) -> dict[str, float]:
    """One fio sequential write (with end fsync) and one invalidated read of the same file."""
    path = scratch / "fio.bin"
    common = [
        "fio",
        f"--filename={path}",
        f"--size={size}",
        f"--bs={block}",
        "--ioengine=psync",
        "--direct=0",
        "--fadvise_hint=0",  # no POSIX_FADV_SEQUENTIAL: iotune gives the kernel no hint
        "--fallocate=none",  # no preallocation: iotune's files grow as they are written
        "--output-format=json",
    ]
    out = {}
    for name, extra in (("write", ["--rw=write", "--end_fsync=1"]), ("read", ["--rw=read"])):
        proc = subprocess.run(
            [*common, f"--name={name}", *extra, "--invalidate=1"],
            capture_output=True,
            text=True,
            check=True,
        )
        job = json.loads(proc.stdout)["jobs"][0][name]
        out[name] = job["bw_bytes"] / MiB
    path.unlink()
    return out


def run(scratch: Path, size: int, block: int, pairs: int) -> list[dict[str, dict[str, float]]]:
    """Interleaved pairs after one untimed warm-up of each tool."""
    with tempfile.TemporaryDirectory(prefix="iotune-fidelity-", dir=scratch) as tmp:
        work = Path(tmp)
        iotune_pass(work, size, block)
        fio_pass(work, size, block)
        return [
            {"iotune": iotune_pass(work, size, block), "fio": fio_pass(work, size, block)}
            for _ in range(pairs)
        ]


def summarise(pairs: list[dict[str, dict[str, float]]]) -> list[dict[str, float | str]]:
    """Per operation: median MiB/s of each tool and the median, min and max ratio."""
    rows = []
    for op in ("write", "read"):
        ratios = [p["iotune"][op] / p["fio"][op] for p in pairs]
        rows.append(
            {
                "operation": op,
                "iotune_MiBps": statistics.median(p["iotune"][op] for p in pairs),
                "fio_MiBps": statistics.median(p["fio"][op] for p in pairs),
                "ratio_median": statistics.median(ratios),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1GiB", help="file size (default 1GiB)")
    parser.add_argument("--block", default="1MiB", help="transfer size (default 1MiB)")
    parser.add_argument("--pairs", type=int, default=7, help="interleaved pairs (default 7)")
    parser.add_argument("--scratch", type=Path, default=Path(), help="directory to measure")
    parser.add_argument("--json", type=Path, help="also write every run here")
    args = parser.parse_args()
    if shutil.which("fio") is None:
        parser.exit(2, "fidelity.py: fio is not installed (apt-get install fio)\n")
    size, block = parse_size(args.size), parse_size(args.block)
    if size % MiB or size < MiB:
        parser.exit(2, f"fidelity.py: --size must be a whole number of MiB, got {args.size}\n")
    pairs = run(args.scratch, size, block, args.pairs)
    print(
        f"file {format_size(size)}, transfers {format_size(block)}, {len(pairs)} pairs, "
        f"iotune residency before reads <= {max(p['iotune']['residency'] for p in pairs):.3f}"
    )
    # a VM that hands freed pages to its host slows whichever side paused last
    print(f"free page reporting: {free_page_reporting()} (docs/benchmarks.md)")
    head = ("operation", "iotune MiB/s", "fio MiB/s", "ratio", "min", "max")
    print("{:<10} {:>12} {:>10} {:>7} {:>6} {:>6}".format(*head))
    for row in summarise(pairs):
        print(
            f"{row['operation']:<10} {row['iotune_MiBps']:>12.0f} {row['fio_MiBps']:>10.0f} "
            f"{row['ratio_median']:>7.3f} {row['ratio_min']:>6.3f} {row['ratio_max']:>6.3f}"
        )
    if args.json:
        args.json.write_text(json.dumps({"pairs": pairs, "summary": summarise(pairs)}, indent=1))


if __name__ == "__main__":
    main()
