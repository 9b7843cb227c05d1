"""``iotune apply`` as a user runs it, against nccopy, dask and rechunker.

A float32 netCDF file with map chunks (1 x lat x lon, uncompressed) is converted to
time-series chunks (zlib 1 + shuffle) by each engine, each in a subprocess whose whole
process tree is sampled every 0.1 s for its resident memory (the peak of the sum).
Each engine starts with the source cold (its pages dropped with ``posix_fadvise``).
Then a time-series read (``--points`` random pixels, the whole time axis each) is timed
cold on the source and the target.

The default size runs in about a minute.  The figures of docs/benchmarks.md (8 GiB):

    PYTHONPATH=. .venv/bin/python benchmarks/apply.py --shape 2048x1024x1024 \\
        --chunks 256x16x16 --max-mem 1GiB --dir /scratch --nccopy-timeout 1800 \\
        --rechunker-python /tmp/rechunker-venv/bin/python --engines all

(rechunker needs zarr < 3, so it runs from a venv of its own:
``python -m venv /tmp/rechunker-venv && /tmp/rechunker-venv/bin/pip install rechunker
xarray netCDF4``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

HERE = Path(__file__).resolve().parent.parent

DASK_CHILD = """
import sys, json, xarray as xr, dask


def main():
    src, dst, chunks, method = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
    mem = int(sys.argv[5])
    if method == "p2p":  # p2p needs a distributed cluster: two worker processes
        from distributed import Client, LocalCluster

        Client(LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=mem // 2,
                            dashboard_address=None))
    ds = xr.open_dataset(src, engine="netcdf4", decode_cf=False, chunks={"time": 1})
    dims, shape = ds["t2m"].dims, ds["t2m"].shape
    # dask chunks of whole target chunks, about 64 MiB each (256 KiB ones: too many tasks)
    rows = max(chunks[1], (2**24 // (chunks[0] * shape[2])) // chunks[1] * chunks[1])
    with dask.config.set({"array.rechunk.method": method}):
        ds["t2m"] = ds["t2m"].chunk(dict(zip(dims, (chunks[0], rows, shape[2]))))
        enc = {"t2m": {"chunksizes": chunks, "zlib": True, "complevel": 1, "shuffle": True}}
        ds.to_netcdf(dst, engine="netcdf4", encoding=enc)


if __name__ == "__main__":  # worker processes import this file
    main()
"""

RECHUNKER_CHILD = """
import sys, json, shutil, xarray as xr, zarr, numcodecs
from rechunker import rechunk
src, dst, chunks, mem = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
ds = xr.open_dataset(src, engine="netcdf4", decode_cf=False, chunks={})
dims = ds["t2m"].dims
codec = {"compressor": numcodecs.Zlib(1), "filters": [numcodecs.Shuffle(4)]}  # as iotune writes
target = {"t2m": dict(zip(dims, chunks)), "time": None, "lat": None, "lon": None}
plan = rechunk(ds[["t2m"]], target, mem, dst, temp_store=dst + ".tmp",
               target_options={"t2m": codec})
plan.execute()
shutil.rmtree(dst + ".tmp", ignore_errors=True)
"""


def make_source(path: Path, shape: tuple[int, int, int]) -> None:
    """Float32 map chunks (1 x lat x lon), uncompressed: a smooth field and some noise."""
    import netCDF4

    steps, ny, nx = shape
    y, x = np.meshgrid(np.linspace(0, 3, ny), np.linspace(0, 6, nx), indexing="ij")
    base = (280 + 20 * np.sin(y) * np.cos(x)).astype("f4")
    rng = np.random.default_rng(0)
    noise = [rng.normal(0, 0.5, (ny, nx)).astype("f4") for _ in range(8)]
    with netCDF4.Dataset(path, "w") as nc:
        for dim, n in zip(("time", "lat", "lon"), shape, strict=True):
            nc.createDimension(dim, n)
            nc.createVariable(dim, "f8", (dim,))[:] = np.arange(n)
        nc["time"].units = "hours since 2000-01-01"
        var = nc.createVariable("t2m", "f4", ("time", "lat", "lon"), chunksizes=(1, ny, nx))
        var.units = "K"
        for t in range(steps):
            var[t] = base + np.float32(np.sin(t / 24)) + noise[t % 8]


def tree_rss(proc: psutil.Process) -> int:
    """Resident bytes of a process and all its descendants."""
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total


def run_sampled(cmd: list[str], *, timeout: float) -> dict[str, object]:
    """Run ``cmd``; its wall time, the peak RSS of its tree (sampled every 0.1 s), its rc."""
    began = time.monotonic()
    child = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    proc, peak, timed_out = psutil.Process(child.pid), 0, False
    while child.poll() is None:
        with contextlib.suppress(psutil.Error):
            peak = max(peak, tree_rss(proc))
        if time.monotonic() - began > timeout:
            timed_out = True
            os.killpg(child.pid, 9)
            break
        time.sleep(0.1)
    _, err = child.communicate()
    seconds = time.monotonic() - began
    if child.returncode and not timed_out:
        print(f"{cmd[0]} ... failed:\n{err[-2000:]}", file=sys.stderr)
    return {
        "seconds": round(seconds, 2),
        "peak_rss_mib": round(peak / 2**20),
        "rc": child.returncode,
        "timed_out": timed_out,
    }


def files_of(path: Path) -> list[Path]:
    return [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]


def timeseries_read(path: Path, points: list[tuple[int, int]], repeats: int) -> float:
    """Median seconds to read the whole time axis at ``points``, cold each time."""
    from iotune.measuring.measure import evict

    times = []
    for _ in range(repeats):
        evict(files_of(path))
        began = time.perf_counter()
        if path.suffix == ".zarr":
            import zarr

            array = zarr.open_array(path / "t2m", mode="r")
            for j, i in points:
                np.asarray(array[:, j, i])
        else:
            import netCDF4

            with netCDF4.Dataset(path) as nc:
                var = nc["t2m"]
                var.set_auto_maskandscale(False)
                for j, i in points:
                    np.asarray(var[:, j, i])
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def engines(args: argparse.Namespace, src: Path, work: Path) -> dict[str, list[str]]:
    """The command of each engine (name: argv), the target's name in it."""
    chunks = args.chunks
    label = "x".join(map(str, chunks))
    settings = f"chunks={label} codec=zlib level=1 shuffle=byte"
    iotune = [sys.executable, "-m", "iotune", "apply", "--settings"]
    # the conversion alone (as nccopy's): no verification, no read patterns timed after
    common = ["--max-mem", args.max_mem, "--no-progress", "--verify", "none", "--no-measure"]
    nc_chunks = ",".join(f"{d}/{c}" for d, c in zip(("time", "lat", "lon"), chunks, strict=True))
    mem = str(parse_mem(args.max_mem))
    runs = {
        "iotune apply (netCDF4)": [
            *iotune,
            settings,
            str(src),
            "-o",
            str(work / "apply.nc"),
            *common,
        ],
        "nccopy -c": [
            "nccopy",
            "-c",
            nc_chunks,
            "-d",
            "1",
            "-s",
            str(src),
            str(work / "nccopy.nc"),
        ],
        "iotune apply (Zarr)": [
            *iotune,
            settings + " backend=zarr",
            str(src),
            "-o",
            str(work / "apply.zarr"),
            *common,
        ],
    }
    if args.engines == "all":
        zarr_target = ["-o", str(work / "apply-dask.zarr"), "--executor", "dask"]
        zarr_settings = [settings + " backend=zarr", str(src)]
        runs["iotune apply (Zarr, --executor dask)"] = [
            *iotune,
            *zarr_settings,
            *zarr_target,
            *common,
        ]
        script = work / "dask_child.py"
        script.write_text(DASK_CHILD)
        for method in ("tasks", "p2p"):
            runs[f"dask rechunk {method} + to_netcdf"] = [
                sys.executable,
                str(script),
                str(src),
                str(work / f"dask-{method}.nc"),
                json.dumps(chunks),
                method,
                mem,
            ]
    if args.rechunker_python:
        runs["rechunker (Zarr v2)"] = [
            args.rechunker_python,
            "-c",
            RECHUNKER_CHILD,
            str(src),
            str(work / "rechunker.zarr"),
            json.dumps(chunks),
            args.max_mem.replace("i", "").upper(),
        ]
    return runs


def parse_mem(text: str) -> int:
    from iotune.core.units import parse_size

    return int(parse_size(text))


def target_of(argv: list[str]) -> Path:
    if "-o" in argv:
        return Path(argv[argv.index("-o") + 1])
    found = [a for a in argv if a.endswith((".nc", ".zarr")) and "/" in a]
    return Path(found[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="256x512x512", help="time x lat x lon (256x512x512)")
    parser.add_argument("--chunks", default="256x16x16", help="target chunks (256x16x16)")
    parser.add_argument("--max-mem", default="1GiB", help="--max-mem of iotune apply (1GiB)")
    parser.add_argument("--dir", type=Path, default=Path(), help="where the files go")
    parser.add_argument("--nccopy-timeout", type=float, default=600.0, help="seconds (600)")
    parser.add_argument("--rechunker-python", help="a python with rechunker (zarr < 3)")
    parser.add_argument(
        "--engines",
        choices=("some", "all"),
        default="some",
        help="all: also dask rechunk (tasks, p2p) + to_netcdf",
    )
    parser.add_argument("--only", help="comma-separated words: run the engines named so")
    parser.add_argument("--points", type=int, default=20, help="time series read (20)")
    parser.add_argument("--keep", action="store_true", help="keep the files")
    args = parser.parse_args()
    shape = tuple(int(n) for n in args.shape.split("x"))
    args.chunks = [min(int(c), n) for c, n in zip(args.chunks.split("x"), shape, strict=True)]
    os.environ["PYTHONPATH"] = f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    work = Path(tempfile.mkdtemp(prefix="iotune-apply-bench-", dir=args.dir))
    try:
        rows = bench(args, shape, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(rows, indent=1))


def bench(args: argparse.Namespace, shape: tuple[int, ...], work: Path) -> dict[str, object]:
    from iotune.measuring.measure import evict

    src = work / "source.nc"
    began = time.monotonic()
    make_source(src, shape)  # type: ignore[arg-type]
    size = src.stat().st_size
    print(
        f"source {shape} float32: {size / 2**30:.2f} GiB in {time.monotonic() - began:.0f} s",
        file=sys.stderr,
    )
    rng = np.random.default_rng(1)
    points = [
        (int(rng.integers(shape[1])), int(rng.integers(shape[2]))) for _ in range(args.points)
    ]
    rows: dict[str, object] = {
        "shape": shape,
        "chunks": args.chunks,
        "max_mem": args.max_mem,
        "source_gib": round(size / 2**30, 2),
        "load_before": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30),
    }
    before = timeseries_read(src, points, 3)
    rows["timeseries_source_s"] = round(before, 3)
    words = [w for w in (args.only or "").split(",") if w]
    for name, argv in engines(args, src, work).items():
        if words and not any(w in name for w in words):
            continue
        timeout = (
            args.nccopy_timeout if "p2p" in name or "nccopy" in name else 4 * args.nccopy_timeout
        )
        evict(files_of(src))  # every engine reads the source cold, whatever ran before
        result = run_sampled(argv, timeout=timeout)
        target = target_of(argv)
        if target.exists() and not result["rc"]:
            result["size_gib"] = round(sum(f.stat().st_size for f in files_of(target)) / 2**30, 2)
            after = timeseries_read(target, points, 3)
            result["timeseries_s"] = round(after, 3)
            result["speedup"] = round(before / after, 1)
        result["load"] = [round(v, 2) for v in os.getloadavg()]
        rows[name] = result
        print(name, result, file=sys.stderr)
        for path in (target, Path(str(target) + ".tmp")):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            elif path.exists():
                path.unlink()
    return rows


if __name__ == "__main__":
    main()
