"""What each file-level knob does on this machine: ``iotune run`` of one spec per format.

Each spec sweeps one format's knobs one at a time against the library's default
(the first value), on a smooth float32 field, with cold reads and interleaved
repeats.  The table gives, per knob value, the median write and read throughput
with the 95 % interval of the median in brackets (the time-series read in ms per
read, with the range of the repeats), the stored size and, for quantisation, the
error.  Run (root, to hold free page reporting):

    .venv/bin/python benchmarks/knobs.py [--steps 64] [--repeats 7] [--out DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

import iotune
from iotune.model.parameters import show

HEAD = """version: 1
name: knobs-{name}
workload: {{shape: {{time: {steps}, y: 512, x: 512}}, dtype: float32, field: smooth}}
backend: {backend}
read: {{patterns: [full, spatial, timeseries]}}
measure: {{repeats: {repeats}, cache: cold, fsync: true, order: interleaved}}
"""
#: one sweep per knob: (name, backend, fixed parameters, the knob and its values)
SWEEPS = [
    ("posix-preallocate", "posix", "transfer_size: 4MiB", "preallocate", "[off, on]"),
    ("posix-direct", "posix", "transfer_size: 4MiB", "direct", "[off, on]"),
    ("posix-fadvise", "posix", "transfer_size: 4MiB", "fadvise", "[none, sequential, random]"),
    ("posix-sync", "posix", "transfer_size: 4MiB", "sync", "[fsync, fdatasync, dsync]"),
    ("h5py-alignment", "h5py", "chunks: [4, 128, 128]", "alignment", "[0, 1MiB]"),
    ("h5py-page", "h5py", "chunks: [4, 128, 128]", "page_size", "[0, 4MiB]"),
    ("h5py-meta", "h5py", "chunks: [4, 128, 128]", "meta_block_size", "[2KiB, 1MiB]"),
    ("h5py-libver", "h5py", "chunks: [4, 128, 128]", "libver", "[earliest, latest]"),
    ("h5py-fill", "h5py", "chunks: [4, 128, 128]", "fill_time", "[ifset, never]"),
    ("h5py-alloc", "h5py", "chunks: [4, 128, 128]", "alloc_time", "[incr, early]"),
    ("netcdf4-fill", "netcdf4", "chunks: [4, 128, 128]", "fill", "[on, off]"),
    (
        "netcdf4-format",
        "netcdf4",
        "chunks: contiguous",
        "format",
        "[NETCDF4, NETCDF4_CLASSIC, NETCDF3_64BIT_DATA]",
    ),
    (
        "netcdf4-quantize",
        "netcdf4",
        "{chunks: [4, 128, 128], codec: zlib, level: 1, shuffle: byte}",
        "quantize",
        "[off, bitround:10, digits:3, bitgroom:3]",
    ),
    (
        "zarr-quantize",
        "zarr",
        "{chunks: [4, 128, 128], codec: zstd, level: 3}",
        "quantize",
        "[off, bitround:10, digits:3]",
    ),
    ("zarr-concurrency", "zarr", "chunks: [4, 64, 64]", "request_concurrency", "[10, 1, 64]"),
    ("zarr-empty", "zarr", "chunks: [4, 128, 128]", "write_empty_chunks", "[on, off]"),
    (
        "zarr-shard-index",
        "zarr",
        "{chunks: [4, 64, 64], shards: [8, 512, 512]}",
        "shard_index",
        "[end, start]",
    ),
]


def spec_text(name: str, backend: str, fixed: str, knob: str, values: str, args) -> str:
    fixed = fixed.strip("{}")
    head = HEAD.format(name=name, steps=args.steps, backend=backend, repeats=args.repeats)
    return head + f"parameters: {{{fixed}, {knob}: {values}}}\n"


def rows(out: Path, knob: str) -> list[str]:
    ds = iotune.open_results(out)
    lines = []
    for value in ds[knob].values:
        one = ds.sel({knob: value}).squeeze()
        if str(one["status"].values) != "ok":
            lines.append(f"| {knob}={show(knob, value.item())} | {one['error'].values} | | | | |")
            continue
        cells = [_cell(one, "write", None)]
        cells += [_cell(one, "read", p) for p in ("full", "spatial")]
        cells.append(_ms(one))
        size = float(one["file_bytes"]) / 2**20
        extra = ""
        if "max_rel_error" in one and np.isfinite(float(one["max_rel_error"])):
            extra = f"; max rel. error {float(one['max_rel_error']):.1e}"
            extra += f", {int(one['digits_kept'])} digits"
        cells_text = " | ".join(cells)
        lines.append(
            f"| {knob}={show(knob, value.item())} | {cells_text} | {size:.1f} MiB{extra} |"
        )
    return lines


def _cell(one, op: str, pattern: str | None) -> str:
    var = f"{op}_MiBps"
    da = one[var] if pattern is None else one[var].sel(pattern=pattern)
    low = one[f"{var}_ci_low"] if pattern is None else one[f"{var}_ci_low"].sel(pattern=pattern)
    high = one[f"{var}_ci_high"] if pattern is None else one[f"{var}_ci_high"].sel(pattern=pattern)
    return f"{float(da.median()):.0f} ({float(low):.0f}-{float(high):.0f})"


def _ms(one) -> str:
    """The time-series read as milliseconds per read (its MiB/s is a tiny number)."""
    seconds = one["read_s"].sel(pattern="timeseries")
    return f"{float(seconds.median()) * 1e3:.1f} ({float(seconds.min()) * 1e3:.1f}-" + (
        f"{float(seconds.max()) * 1e3:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=64, help="time steps of 1 MiB (default 64)")
    # 6 repeats at least: with fewer the 95 % interval of a median is not defined
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("knobs-results"))
    parser.add_argument("--only", help="comma-separated sweep names")
    args = parser.parse_args()
    args.out.mkdir(exist_ok=True)
    print("| knob | write MiB/s | read full MiB/s | read spatial MiB/s | timeseries ms | stored |")
    print("|---|---|---|---|---|---|")
    for name, backend, fixed, knob, values in SWEEPS:
        if args.only and name not in args.only.split(","):
            continue
        spec = args.out / f"{name}.yaml"
        spec.write_text(spec_text(name, backend, fixed, knob, values, args))
        out = args.out / name
        cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out)]
        subprocess.run(
            [*cmd, "--overwrite", "--no-progress", "-q"], check=True, stdout=subprocess.DEVNULL
        )
        print("\n".join(rows(out, knob)), flush=True)


if __name__ == "__main__":
    main()
