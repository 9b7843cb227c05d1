"""A large contiguous shared-file write through ``mpiio`` against a plain POSIX write.

Both move the same bytes to the same scratch file system in the same transfer
size, with ``fsync`` (``MPI_File_sync``) inside the timed span and cold reads:

- ``posix``: one process, ``pwrite`` of the whole file front to back;
- ``mpiio``: ``--nprocs`` ranks (``mpiexec`` from the mpich wheel), one shared
  file, contiguous blocks, ``--io`` independent (default) or collective calls with
  the library's default hints;
  the slowest rank's time counts, as in IOR.

Every MPI trial runs in freshly launched rank processes, so the posix write
is also measured in a new process of its own ("posix, new process") beside
the same process as the sweep ("posix").  Runs are interleaved (posix, posix
in a new process, mpiio, ...) ``--pairs`` times after one untimed warm-up
round, and each round gives ratios mpiio/posix.  Target: at
least 0.90 for the write.  Run:

    .venv/bin/python benchmarks/mpiio_vs_posix.py [--size 512MiB] [--nprocs 2] [--pairs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from iotune.core.units import parse_size
from iotune.model.records import TrialTask
from iotune.runner.plan import make_plan
from iotune.runner.provenance import free_page_reporting
from iotune.runner.trial import run_trial
from iotune.specfile.parse import load_spec_text

MiB = 2**20

SPEC = """
version: 1
name: mpiio-vs-posix
workload: {{shape: {{time: {steps}, y: 512, x: 1024}}, dtype: int16, field: random}}
backend: {backend}
parameters: {parameters}
read: {{patterns: [full]}}
measure: {{repeats: 1, cache: cold, fsync: true}}
"""


def one_pass(backend: str, parameters: str, steps: int, scratch: Path) -> dict[str, float]:
    """Write and cold-read the file once through iotune's trial path."""
    sweep = load_spec_text(SPEC.format(steps=steps, backend=backend, parameters=parameters))
    (trial,) = make_plan(sweep).trials
    result = run_trial(TrialTask(trial, sweep.workload, sweep.read, sweep.measure, str(scratch)))
    if result.status != "ok":
        raise RuntimeError(f"{backend} trial failed: {result.error}")
    return {"write": result.write[0]["MiBps"], "read": result.reads["full"][0]["MiBps"]}


def fresh_pass(backend: str, parameters: str, steps: int, scratch: Path) -> dict[str, float]:
    """:func:`one_pass` in a new process, as every launched MPI rank is."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import mpiio_vs_posix as m; "
        "print(json.dumps(m.one_pass(sys.argv[2], sys.argv[3], int(sys.argv[4]), "
        "m.Path(sys.argv[5]))))"
    )
    here = str(Path(__file__).resolve().parent)
    out = subprocess.run(
        [sys.executable, "-c", code, here, backend, parameters, str(steps), str(scratch)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="512MiB", help="bytes moved (default 512MiB)")
    parser.add_argument("--transfer", default="4MiB", help="transfer size (default 4MiB)")
    parser.add_argument("--nprocs", type=int, default=2, help="MPI ranks (default 2)")
    parser.add_argument("--pairs", type=int, default=5, help="interleaved pairs (default 5)")
    parser.add_argument(
        "--io", choices=("collective", "independent"), default="independent", help="MPI-IO calls"
    )
    parser.add_argument("--scratch", type=Path, default=Path(), help="directory to measure")
    args = parser.parse_args()
    steps = parse_size(args.size) // MiB  # one time step of the workload is 1 MiB
    posix = f"{{transfer_size: {args.transfer}}}"
    mpiio = (
        f"{{transfer_size: {args.transfer}, nprocs: {args.nprocs}, layout: shared, "
        f"io: {args.io}, access: contiguous}}"
    )
    arms = {
        "posix": lambda: one_pass("posix", posix, steps, Path(tmp)),
        "posix, new process": lambda: fresh_pass("posix", posix, steps, Path(tmp)),
        "mpiio": lambda: one_pass("mpiio", mpiio, steps, Path(tmp)),
    }
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in arms}
    with tempfile.TemporaryDirectory(dir=args.scratch) as tmp:
        for i in range(args.pairs + 1):
            for name, arm in arms.items():
                figures = arm()
                if i:  # the first round warms up libraries and the launcher
                    runs[name].append(figures)
    print(
        f"{args.size} in {args.transfer} transfers; mpiio: {args.nprocs} ranks, one shared file, "
        f"{args.io} I/O, default hints"
    )
    # a VM that hands freed pages to its host slows whichever side paused last
    print(f"free page reporting: {free_page_reporting()} (docs/benchmarks.md)")
    print(
        f"{'op':<6} {'baseline':<20} {'base MiB/s':>10} {'mpiio MiB/s':>11} {'ratio':>6} "
        f"{'min':>6} {'max':>6}"
    )
    for op in ("write", "read"):
        for base in ("posix", "posix, new process"):
            ratios = [m[op] / p[op] for p, m in zip(runs[base], runs["mpiio"], strict=True)]
            print(
                f"{op:<6} {base:<20} {statistics.median(r[op] for r in runs[base]):>10.0f} "
                f"{statistics.median(r[op] for r in runs['mpiio']):>11.0f} "
                f"{statistics.median(ratios):>6.3f} {min(ratios):>6.3f} {max(ratios):>6.3f}"
            )


if __name__ == "__main__":
    main()
