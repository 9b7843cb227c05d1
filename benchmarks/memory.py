"""Peak resident memory of one trial on a dataset far larger than a slab.

Runs one netCDF4 trial (chunked, zlib, full + spatial + time-series reads) in
a fresh process and reports its peak RSS next to the dataset size.  Run:

    .venv/bin/python benchmarks/memory.py [--gib 4]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

CHILD = """
import json, resource, sys, time
from iotune.runner.plan import make_plan
from iotune.specfile.parse import load_spec_text
from iotune.model.records import TrialTask
from iotune.runner.trial import run_trial
sweep = load_spec_text(sys.argv[1])
(trial,) = make_plan(sweep).trials
t0 = time.perf_counter()
result = run_trial(TrialTask(trial, sweep.workload, sweep.read, sweep.measure, sys.argv[2]))
print(json.dumps({"status": result.status, "error": result.error,
                  "seconds": time.perf_counter() - t0,
                  "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def spec(gib: float) -> str:
    steps = max(1, int(gib * 2**30 / (512 * 512 * 2)))
    return f"""
version: 1
workload: {{shape: {{time: {steps}, y: 512, x: 512}}, dtype: int16}}
parameters: {{chunks: [16, 128, 128], codec: zlib, level: 1}}
read: {{patterns: [full, spatial, timeseries], timeseries: {{pixels: 4}}}}
measure: {{repeats: 1}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4.0, help="dataset size in GiB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=".") as scratch:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, spec(args.gib), scratch],
            capture_output=True,
            text=True,
            check=True,
        )
    row = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"{'dataset GiB':>11} {'status':>7} {'seconds':>8} {'peak RSS MiB':>13}")
    print(
        f"{args.gib:>11.2f} {row['status']:>7} {row['seconds']:>8.1f} "
        f"{row['peak_rss_kib'] / 1024:>13.0f}"
    )
    if row["status"] != "ok":
        print(row["error"])


if __name__ == "__main__":
    main()
