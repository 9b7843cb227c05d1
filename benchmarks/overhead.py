"""Per-trial overhead: wall time of a trial minus the time it reports as I/O.

Tiny trials (a 64 KiB netCDF4 file, one repeat, one full read) make the
overhead visible: everything that is not a timed library call, fsync
included in the timed part, counts as overhead.  Run:

    .venv/bin/python benchmarks/overhead.py [--trials 50]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from iotune.executors.serial import SerialExecutor
from iotune.model.records import TrialTask
from iotune.runner.plan import make_plan
from iotune.specfile.parse import load_spec_text

SPEC = """
version: 1
workload: {shape: {time: 8, y: 64, x: 64}}
parameters: {chunks: [8, 64, 64], codec: [none, zlib]}
read: {patterns: [full]}
measure: {repeats: 1}
"""


def _tasks(n: int, scratch: str) -> list[TrialTask]:
    sweep = load_spec_text(SPEC)
    trials = make_plan(sweep).trials
    return [
        TrialTask(trials[i % len(trials)], sweep.workload, sweep.read, sweep.measure, scratch)
        for i in range(n)
    ]


def _measured(result) -> float:
    io = sum(w["s"] for w in result.write)
    io += sum(r["s"] for runs in result.reads.values() for r in runs)
    return io


def overhead(n: int, *, isolated: bool) -> list[float]:
    """Seconds per trial outside the timed I/O."""
    out = []
    with tempfile.TemporaryDirectory(dir=".") as scratch:
        tasks = _tasks(n, scratch)
        executor = SerialExecutor(isolate=isolated)
        results = executor.map(tasks[:2])  # warm the worker and imports
        list(results)
        for task in tasks:
            t0 = time.perf_counter()
            (result,) = list(executor.map([task]))
            out.append(time.perf_counter() - t0 - _measured(result))
        executor.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50)
    args = parser.parse_args()
    print(f"{'mode':<28} {'trials':>6} {'min ms':>8} {'median ms':>10} {'max ms':>8}")
    for label, isolated in (("in process", False), ("worker process (default)", True)):
        ms = [1000 * s for s in overhead(args.trials, isolated=isolated)]
        print(
            f"{label:<28} {len(ms):>6} {min(ms):>8.1f} {statistics.median(ms):>10.1f} "
            f"{max(ms):>8.1f}"
        )


if __name__ == "__main__":
    main()
