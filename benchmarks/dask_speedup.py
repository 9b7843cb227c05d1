"""Wall time of a CPU-bound memory-codec sweep: serial vs dask with 2 workers.

Both runs are whole ``iotune run`` commands (cluster start-up included), on
the same spec, alternated over ``--rounds``.  Run:

    .venv/bin/python benchmarks/dask_speedup.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """
version: 1
name: memory-codecs
workload: {shape: {time: 64, y: 256, x: 256}, dtype: int16}
backend: memory
parameters:
  chunks: [[8, 128, 128], [1, 256, 256]]
  codec: [zlib, bzip2, zstd, blosc-lz4, blosc-zstd]
  level: [1, 5, 9]
  shuffle: [none, byte]
read: {patterns: [full, timeseries], timeseries: {pixels: 8}}
measure: {repeats: 2}
"""


def timed(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "iotune", "run", *args], check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "memory.yaml"
        spec.write_text(SPEC)
        serial, dask = [], []
        for i in range(args.rounds):
            base = ["--no-progress", "--overwrite"]
            serial.append(timed([str(spec), "-o", f"{tmp}/s{i}", *base]))
            dask.append(timed([str(spec), "-o", f"{tmp}/d{i}", "--workers", "2", *base]))
    s, d = statistics.median(serial), statistics.median(dask)
    print(f"{'executor':<22} {'runs':>4} {'min s':>7} {'median s':>9} {'max s':>7}")
    for label, xs in (("serial", serial), ("dask, 2 workers", dask)):
        print(
            f"{label:<22} {len(xs):>4} {min(xs):>7.1f} {statistics.median(xs):>9.1f} "
            f"{max(xs):>7.1f}"
        )
    print(f"speedup (median serial / median dask): {s / d:.2f}x; dask/serial = {d / s:.2f}")


if __name__ == "__main__":
    main()
