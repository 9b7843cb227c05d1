"""``iotune apply --dry-run`` against the conversion it predicts, through the CLI.

A user's path, step by step:

1. a float32 netCDF file with map chunks (``apply.make_source``, uncompressed);
2. ``iotune run`` of a sweep of the file itself (``workload: field: file``) cropped to
   ``--steps`` steps, the target layout its only configuration;
3. ``iotune apply RESULTS SOURCE -o TARGET --dry-run --format json`` (source cold);
4. the same command without ``--dry-run`` (``--no-measure``, source cold), timed.

Prints the predicted and measured size and time and their errors; the issue's bar is
10 % on the size and 30 % on the time.  The figures of docs/benchmarks.md (8 GiB):

    PYTHONPATH=. .venv/bin/python benchmarks/apply_predict.py --shape 2048x1024x1024 \\
        --steps 256 --chunks 256x16x16 --max-mem 1GiB --dir /scratch

The default size (512 MiB) runs in about a minute.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from apply import make_source

from iotune.measuring.measure import evict

SPEC = """version: 1
name: predict
workload:
  field: file
  path: {source}
  variable: t2m
  shape: {{time: {steps}, lat: {ny}, lon: {nx}}}
backend: {backend}
parameters:
  chunks: [[{chunks}]]
  codec: [zlib]
  level: 1
  shuffle: [byte]
read:
  patterns: [timeseries]
  timeseries: {{pixels: 16}}
measure:
  repeats: {repeats}
"""


def iotune(*args: str) -> tuple[str, float]:
    """Run the CLI; its standard output and wall seconds (exits on failure)."""
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "iotune", *args], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - began
    if done.returncode:
        sys.exit(f"iotune {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout, seconds


def bench(args: argparse.Namespace, work: Path) -> dict[str, object]:
    steps_all, ny, nx = (int(n) for n in args.shape.split("x"))
    source = work / "src.nc"
    began = time.perf_counter()
    make_source(source, (steps_all, ny, nx))
    made = time.perf_counter() - began
    spec = work / "spec.yaml"
    chunks = ", ".join(args.chunks.split("x"))
    spec.write_text(
        SPEC.format(
            source=source,
            steps=args.steps,
            ny=ny,
            nx=nx,
            chunks=chunks,
            repeats=args.repeats,
            backend=args.backend,
        )
    )
    _out, sweep_s = iotune("run", str(spec), "-o", str(work / "results"), "--no-progress")
    target = work / ("target.zarr" if args.backend == "zarr" else "target.nc")
    common = [str(work / "results"), str(source), "-o", str(target)]
    common += ["--objective", "read:timeseries", "--max-mem", args.max_mem, "--format", "json"]
    evict([source])
    dry_out, dry_s = iotune("apply", *common, "--dry-run")
    evict([source])
    done_out, apply_s = iotune("apply", *common, "--no-measure", "--no-progress")
    dry, done = json.loads(dry_out), json.loads(done_out)
    size, predicted_s = dry["size_bytes"], dry["seconds"]
    return {
        "shape": args.shape,
        "backend": args.backend,
        "sweep_steps": args.steps,
        "chunks": args.chunks,
        "source_made_s": round(made, 1),
        "sweep_s": round(sweep_s, 1),
        "sweep_write_MiBps": dry["write_MiBps"],
        "probe_MiBps": dry["probe"].get("MiBps"),
        "dry_run_s": round(dry_s, 1),
        "predicted": {
            "bytes": size,
            "seconds": predicted_s,
            "read_s": dry["read_seconds"],
            "write_s": dry["write_seconds"],
            "verify_s": dry["verify_seconds"],
            "peak_bytes": dry["peak_bytes"],
        },
        "measured": {"bytes": done["bytes_after"], "seconds": round(apply_s, 1)},
        "size_error": round(size / done["bytes_after"] - 1, 4),
        "time_error": round(predicted_s / apply_s - 1, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="512x512x512", help="time x lat x lon (512x512x512)")
    parser.add_argument("--steps", type=int, default=128, help="steps the sweep writes (128)")
    parser.add_argument("--chunks", default="128x16x16", help="target chunks (128x16x16)")
    parser.add_argument("--max-mem", default="1GiB", help="--max-mem of iotune apply (1GiB)")
    parser.add_argument("--backend", default="netcdf4", choices=["netcdf4", "zarr"])
    parser.add_argument("--repeats", type=int, default=2, help="the sweep's repeats (2)")
    parser.add_argument("--dir", type=Path, default=None, help="where the files go (a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print(json.dumps(bench(args, Path(tmp)), indent=2))


if __name__ == "__main__":
    main()
