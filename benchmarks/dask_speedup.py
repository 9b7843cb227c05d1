"""Wall time of a CPU-bound memory-codec sweep: serial vs dask at several worker counts.

Every run is a whole ``iotune run`` command (cluster start-up included), on
the same spec, alternated over ``--rounds``.  Per executor: wall time,
speedup over serial (medians) and the run's own efficiency figures (busy share
of workers after start-up, start-up, tail; :mod:`iotune.runner.efficiency`).
Run:

    .venv/bin/python benchmarks/dask_speedup.py [--rounds 2] [--workers 2,4,8,16]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """
version: 1
name: memory-codecs
workload: {shape: {time: TIME, y: 256, x: 256}, dtype: int16}
backend: memory
parameters:
  chunks: [[8, 128, 128], [1, 256, 256]]
  codec: [zlib, bzip2, zstd, blosc-lz4, blosc-zstd]
  level: [1, 5, 9]
  shuffle: [none, byte]
read: {patterns: [full, timeseries], timeseries: {pixels: 8}}
measure: {repeats: 2}
"""


def timed(args: list[str], out: str) -> tuple[float, dict[str, float]]:
    """Wall seconds of one ``iotune run`` and the efficiency figures it saved."""
    import xarray as xr

    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "iotune", "run", *args, "-o", out],
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    with xr.open_dataset(Path(out) / "results.nc") as ds:
        prefix = "provenance_efficiency_"
        figures = {k[len(prefix) :]: float(v) for k, v in ds.attrs.items() if k.startswith(prefix)}
    return wall, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", default="2", help="dask worker counts, e.g. 2,4,8,16")
    parser.add_argument(
        "--time", type=int, default=64, help="time steps of the workload (64: the issue's sweep)"
    )
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    runs: dict[int, list[tuple[float, dict[str, float]]]] = {n: [] for n in [1, *counts]}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "memory.yaml"
        spec.write_text(SPEC.replace("TIME", str(args.time)))
        base = [str(spec), "--no-progress", "--overwrite"]
        for i in range(args.rounds):
            for n in runs:  # 1: the serial executor
                extra = [] if n == 1 else ["--workers", str(n)]
                runs[n].append(timed([*base, *extra], f"{tmp}/{n}-{i}"))
    serial = statistics.median(w for w, _ in runs[1])
    # the machine's other work competes with the workers: say how busy it was
    print(f"load average (1 min) before {load:.1f}, after {os.getloadavg()[0]:.1f}")
    print(
        f"{'executor':<18} {'runs':>4} {'min s':>7} {'median s':>9} {'max s':>7} "
        f"{'speedup':>8} {'busy':>6} {'start s':>8} {'tail s':>7}"
    )
    for n, got in runs.items():
        walls = [w for w, _ in got]
        med = statistics.median(walls)
        label = "serial" if n == 1 else f"dask, {n} workers"

        def fig(key: str, got: list[tuple[float, dict[str, float]]] = got) -> float:
            return statistics.median(f.get(key, float("nan")) for _, f in got)

        print(
            f"{label:<18} {len(walls):>4} {min(walls):>7.1f} {med:>9.1f} {max(walls):>7.1f} "
            f"{serial / med:>7.2f}x {100 * fig('busy'):>5.0f}% {fig('startup_s'):>8.1f} "
            f"{fig('tail_s'):>7.1f}"
        )


if __name__ == "__main__":
    main()
