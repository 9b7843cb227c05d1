"""Fidelity: ``iotune run`` of a posix spec, as a user runs it, against fio.

Each pair runs, on the same scratch directory, the same file size and
transfer size:

- ``iotune run SPEC`` in a new process (the CLI a user types): a ``posix``
  trial with the sweep defaults (``repeats: 3``, ``cache: cold``,
  ``fsync: true``), random int16 data, the ``full`` read; its figure is what
  ``iotune show`` prints, the median of the repeats (after iotune's own
  untimed warm-up, nothing else);
- fio, three jobs of a sequential write with ``--end_fsync=1`` and a read after
  ``--invalidate=1`` (``--ioengine=psync``, buffered, ``--fallocate=none``,
  ``--fadvise_hint=0``: iotune neither preallocates nor hints; with ``--preallocate``
  fio keeps its default ``--fallocate`` and the posix spec says ``preallocate: on``);
  its figure is
  the median of the three.  Between fio's write and its read the file's pages
  are dropped from the page cache here, untimed, as iotune drops its own
  before a cold read: fio's ``--invalidate`` runs inside fio's timed window,
  and on the 1 GiB of pages its write just left in the cache that
  ``posix_fadvise(DONTNEED)`` takes 52 ms (strace), which made fio's read of a
  file it had just written 9 % slower than a second read of it (2133 against
  2333 MiB/s, ``benchmarks/read_pauses.py``);
- with ``--mpiio N``, also ``iotune run`` of the same bytes through the
  ``mpiio`` backend (N ranks, one shared file, contiguous blocks, independent
  calls, the library's default hints), as a ratio to the posix write.

The members of a pair run in an order that alternates from pair to pair, so
neither tool always follows the other's pause.  Every pair gives the ratios
iotune/fio; the median over ``--pairs`` pairs and its range are reported per
transfer size.  On a VM with free page reporting (docs/benchmarks.md) pass
``--hold-page-reporting`` (root) to hold it off for the run.  Run:

    .venv/bin/python benchmarks/fidelity.py [--size 1GiB] [--blocks 1MiB,4MiB,32MiB]
        [--pairs 5] [--mpiio 2] [--scratch DIR] [--hold-page-reporting] [--preallocate]
        [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import iotune
from iotune.core.units import format_size, parse_size
from iotune.measuring.measure import evict
from iotune.runner.provenance import free_page_reporting

MiB = 2**20
FIO_RUNS = 3
MIN_FREE_MS = Path("/sys/module/page_reporting/parameters/min_free_ms")

SPEC = """version: 1
name: fidelity-{backend}
workload: {{shape: {{time: {steps}, y: 512, x: 1024}}, dtype: int16, field: random}}
backend: {backend}
parameters: {parameters}
read: {{patterns: [full]}}
measure: {{repeats: 3, cache: cold, fsync: true, noise_probes: 0}}
"""


def iotune_run(spec: Path, scratch: Path) -> dict[str, float]:
    """``iotune run SPEC`` in a new process; the medians its results hold."""
    out = scratch / "out"
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out)]
    cmd += ["--scratch", str(scratch), "--overwrite", "--no-progress"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ds = iotune.open_results(out)
    if ds.iotune.counts().get("ok") != 1:
        raise RuntimeError(f"the trial of {spec.name} failed: {ds['error'].values.ravel()}")
    read = ds["read_MiBps"].sel(pattern="full")
    return {
        "write": float(ds["write_MiBps"].median()),
        "read": float(read.median()),
        "residency": float(ds["resident_fraction"].max()),
    }


def fio_run(scratch: Path, size: int, block: int, *, preallocate: bool) -> dict[str, float]:
    """Median of three fio write (end fsync) + invalidated read jobs.

    ``preallocate``: fio's default ``--fallocate`` (it reserves the file's blocks
    first), else ``--fallocate=none``.
    """
    path = scratch / "fio.bin"
    common = [
        "fio",
        f"--filename={path}",
        f"--size={size}",
        f"--bs={block}",
        "--ioengine=psync",
        "--direct=0",
        "--fadvise_hint=0",
        *([] if preallocate else ["--fallocate=none"]),
        "--invalidate=1",
        "--output-format=json",
    ]
    found: dict[str, list[float]] = {"write": [], "read": []}
    for _ in range(FIO_RUNS):
        for name, extra in (("write", ["--rw=write", "--end_fsync=1"]), ("read", ["--rw=read"])):
            if name == "read":
                evict([path])  # untimed, as iotune does before a cold read
            proc = subprocess.run(
                [*common, f"--name={name}", *extra], capture_output=True, text=True, check=True
            )
            found[name].append(json.loads(proc.stdout)["jobs"][0][name]["bw_bytes"] / MiB)
        path.unlink()
    return {op: statistics.median(v) for op, v in found.items()}


@contextlib.contextmanager
def page_reporting_held(hold: bool) -> Iterator[None]:
    """Hold the VM's free page reporting off (root), restoring the old value after."""
    if not hold:
        yield
        return
    old = MIN_FREE_MS.read_text().strip()
    MIN_FREE_MS.write_text("60000")
    try:
        yield
    finally:
        MIN_FREE_MS.write_text(old)


def pairs_for(args: argparse.Namespace, block: int, work: Path) -> list[dict]:
    steps = args.size // MiB
    posix = work / "posix.yaml"
    knobs = f"{{transfer_size: {block}" + (", preallocate: on}" if args.preallocate else "}")
    posix.write_text(SPEC.format(steps=steps, backend="posix", parameters=knobs))
    mpi = work / "mpiio.yaml"
    parameters = (
        f"{{nprocs: {args.mpiio}, transfer_size: {block}, layout: shared, io: independent}}"
    )
    mpi.write_text(SPEC.format(steps=steps, backend="mpiio", parameters=parameters))
    out = []
    for i in range(args.pairs):
        members = {
            "iotune": lambda: iotune_run(posix, work),
            "fio": lambda: fio_run(work, args.size, block, preallocate=args.preallocate),
        }
        if args.mpiio:
            members["mpiio"] = lambda: iotune_run(mpi, work)
        names = list(members)
        order = names if i % 2 == 0 else names[::-1]  # alternate who follows whom
        out.append({name: members[name]() for name in order})
    return out


def summarise(pairs: list[dict]) -> list[dict]:
    """Per comparison: the medians and the median, min and max of the per-pair ratio."""
    rows = []
    comparisons = [("iotune", "fio", "write"), ("iotune", "fio", "read")]
    if "mpiio" in pairs[0]:
        comparisons.append(("mpiio", "iotune", "write"))
    for top, bottom, op in comparisons:
        ratios = [p[top][op] / p[bottom][op] for p in pairs]
        rows.append(
            {
                "comparison": f"{top}/{bottom} {op}",
                "top_MiBps": statistics.median(p[top][op] for p in pairs),
                "bottom_MiBps": statistics.median(p[bottom][op] for p in pairs),
                "ratio_median": statistics.median(ratios),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1GiB", help="file size (default 1GiB)")
    parser.add_argument("--blocks", default="1MiB,4MiB,32MiB", help="transfer sizes")
    parser.add_argument("--pairs", type=int, default=5, help="interleaved pairs (default 5)")
    parser.add_argument("--mpiio", type=int, default=0, help="also mpiio with N ranks")
    parser.add_argument("--scratch", type=Path, default=Path(), help="directory to measure")
    parser.add_argument("--hold-page-reporting", action="store_true")
    parser.add_argument(
        "--preallocate",
        action="store_true",
        help="fio with its default fallocate against iotune's posix preallocate: on",
    )
    parser.add_argument("--json", type=Path, help="also write every run here")
    args = parser.parse_args()
    if shutil.which("fio") is None:
        parser.exit(2, "fidelity.py: fio is not installed (apt-get install fio)\n")
    args.size = parse_size(args.size)
    if args.size % MiB or args.size < MiB:
        parser.exit(2, "fidelity.py: --size must be a whole number of MiB\n")
    blocks = [parse_size(b) for b in args.blocks.split(",")]
    report: dict[str, dict] = {}
    with page_reporting_held(args.hold_page_reporting):
        print(f"free page reporting: {free_page_reporting()}")
        for block in blocks:
            with tempfile.TemporaryDirectory(prefix="iotune-fidelity-", dir=args.scratch) as tmp:
                pairs = pairs_for(args, block, Path(tmp))
            report[format_size(block)] = {"pairs": pairs, "summary": summarise(pairs)}
            residency = max(p["iotune"]["residency"] for p in pairs)
            print(
                f"\nfile {format_size(args.size)}, transfers {format_size(block)}, "
                f"{len(pairs)} pairs, iotune residency before reads <= {residency:.3f}"
            )
            for row in report[format_size(block)]["summary"]:
                print(
                    f"  {row['comparison']:<22} {row['top_MiBps']:>7.0f} vs "
                    f"{row['bottom_MiBps']:>7.0f} MiB/s  ratio {row['ratio_median']:.3f} "
                    f"({row['ratio_min']:.3f}-{row['ratio_max']:.3f})"
                )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
