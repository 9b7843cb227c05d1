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

``--collection``: 64 files (``--files``) of ``--total`` bytes in all (8GiB) combined into
one Zarr store, serially and with ``--executor dask`` (a LocalCluster of 2 workers on
2 cores), then killed with SIGKILL half-way and ``--resume``d (docs/benchmarks.md):

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/apply.py --collection \
        --total 8GiB --max-mem 1GiB --dir /tmp/applybench

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
    parser.add_argument(
        "--collection",
        action="store_true",
        help="a collection of --files files to one Zarr store: serial, --executor dask, "
        "killed half-way and resumed",
    )
    parser.add_argument("--files", type=int, default=64, help="files of the collection (64)")
    parser.add_argument("--total", default="8GiB", help="the collection's size (8GiB)")
    args = parser.parse_args()
    shape = tuple(int(n) for n in args.shape.split("x"))
    if args.collection:
        args.chunks = [int(c) for c in args.chunks.split("x")]
    else:
        args.chunks = [min(int(c), n) for c, n in zip(args.chunks.split("x"), shape, strict=True)]
    os.environ["PYTHONPATH"] = f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    work = Path(tempfile.mkdtemp(prefix="iotune-apply-bench-", dir=args.dir))
    try:
        rows = bench_collection(args, work) if args.collection else bench(args, shape, work)
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


# --- a collection of files to one Zarr store: serially, on a LocalCluster, killed and resumed


def make_collection(where: Path, *, files: int, total: int) -> tuple[list[Path], int]:
    """``files`` float32 files of 32 maps each (map chunks, uncompressed), ``total`` bytes in
    all: the map's side grows with ``total`` (1024 x 1024 for 64 files of 8 GiB)."""
    import netCDF4

    steps = 32
    side = max(16, round((total / (files * steps * 4)) ** 0.5) // 16 * 16)
    y, x = np.meshgrid(np.linspace(0, 3, side), np.linspace(0, 6, side), indexing="ij")
    base = (280 + 20 * np.sin(y) * np.cos(x)).astype("f4")
    rng = np.random.default_rng(0)
    noise = [rng.normal(0, 0.5, (side, side)).astype("f4") for _ in range(8)]
    paths = []
    for f in range(files):
        path = where / f"archive_{f:03d}.nc"
        with netCDF4.Dataset(path, "w") as nc:
            nc.createDimension("time", None)
            for dim in ("lat", "lon"):
                nc.createDimension(dim, side)
                nc.createVariable(dim, "f8", (dim,))[:] = np.arange(side)
            tv = nc.createVariable("time", "f8", ("time",))
            tv.units = "hours since 2000-01-01"
            tv[:] = np.arange(f * steps, (f + 1) * steps)
            var = nc.createVariable("t2m", "f4", ("time", "lat", "lon"), chunksizes=(1, side, side))
            var.units = "K"
            for t in range(steps):
                step = f * steps + t
                var[t] = base + np.float32(np.sin(step / 24)) + noise[step % 8]
        paths.append(path)
    return paths, side


def journal_lines(journal: Path) -> tuple[int, list[dict[str, object]]]:
    """The regions a journal plans, and its ``written`` entries (a torn last line skipped)."""
    if not journal.exists():
        return 0, []
    lines = journal.read_text().split("\n")
    try:
        header = json.loads(lines[0])
    except ValueError:
        return 0, []
    entries = []
    for line in lines[1:]:
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if "written" in entry:
                entries.append(entry)
    return len(header["job"]["regions"]), entries


def region_chunks(entry: dict[str, object], chunks: list[int], side: int) -> list[str]:
    """The t2m chunk keys (``t2m/c/T/J/I``) a journalled region wrote."""
    bounds = entry.get("bounds") or [[entry["start"], entry["stop"]]]
    (start, _), *inner = bounds  # type: ignore[misc]
    lo, hi = inner[0] if inner else (0, side)
    cols = range(lo // chunks[1], -(-hi // chunks[1]))
    return [
        f"t2m/c/{start // chunks[0]}/{j}/{i}" for j in cols for i in range(-(-side // chunks[2]))
    ]


def kill_half_way(cmd: list[str], journal: Path, *, timeout: float) -> dict[str, object]:
    """Run ``cmd``; SIGKILL its process (not its workers) once half its regions are journalled."""
    began = time.monotonic()
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    proc, peak, workers = psutil.Process(child.pid), 0, []
    while child.poll() is None and time.monotonic() - began < timeout:
        with contextlib.suppress(psutil.Error):
            peak = max(peak, tree_rss(proc))
            workers = proc.children(recursive=True) or workers
        total, done = journal_lines(journal)
        if total and len(done) >= max(1, total // 2):
            break
        time.sleep(0.1)
    if child.poll() is not None:  # finished (or failed) before half its regions were written
        raise SystemExit(
            f"the run to kill ended first (rc {child.returncode}): {child.stderr.read()[-2000:]}"
        )  # type: ignore[union-attr]
    os.kill(child.pid, 9)
    child.wait()
    _, alive = psutil.wait_procs(workers, timeout=30)
    total, done = journal_lines(journal)
    return {
        "seconds": round(time.monotonic() - began, 2),
        "peak_rss_mib": round(peak / 2**20),
        "regions_written": len(done),
        "regions": total,
        "workers_left_running": len(alive),
    }


def bench_collection(args: argparse.Namespace, work: Path) -> dict[str, object]:
    """Serial and ``--executor dask`` conversions of the collection, then a kill and resume."""
    from iotune.measuring.measure import evict

    began = time.monotonic()
    paths, side = make_collection(work, files=args.files, total=parse_mem(args.total))
    size = sum(p.stat().st_size for p in paths)
    print(
        f"{len(paths)} files, {size / 2**30:.2f} GiB in {time.monotonic() - began:.0f} s",
        file=sys.stderr,
    )
    chunks = [min(c, n) for c, n in zip(args.chunks, (32 * args.files, side, side), strict=True)]
    settings = f"chunks={'x'.join(map(str, chunks))} codec=zlib level=1 shuffle=byte backend=zarr"
    glob_ = str(work / "archive_*.nc")
    common = ["--max-mem", args.max_mem, "--no-progress", "--no-measure", "--verify", "sample"]
    base = [sys.executable, "-m", "iotune", "apply", "--settings", settings, glob_, *common]
    limit = parse_mem(args.max_mem)
    rows: dict[str, object] = {
        "files": len(paths),
        "map": f"{side}x{side}",
        "chunks": chunks,
        "source_gib": round(size / 2**30, 2),
        "max_mem": args.max_mem,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30),
        "load_before": [round(v, 2) for v in os.getloadavg()],
    }
    from iotune.convert.cluster import DEFAULT_WORKERS

    runs = {"serial": (["-o", str(work / "serial.zarr")], 1)}
    runs["dask"] = (["-o", str(work / "dask.zarr"), "--executor", "dask"], DEFAULT_WORKERS)
    for name, (extra, workers) in runs.items():
        evict(paths)
        result = run_sampled([*base, *extra], timeout=args.nccopy_timeout * 4)
        result["bound_mib"] = round(workers * limit / 2**20)  # --max-mem per worker x workers
        result["load"] = [round(v, 2) for v in os.getloadavg()]
        rows[name] = result
        print(name, result, file=sys.stderr)
        shutil.rmtree(target_of(extra), ignore_errors=True)
    serial, dask = rows["serial"], rows["dask"]
    rows["speedup"] = round(serial["seconds"] / dask["seconds"], 2)  # type: ignore[index]
    rows["kill_and_resume"] = kill_and_resume(base, work, chunks, side, paths, args)
    return rows


def kill_and_resume(
    base: list[str],
    work: Path,
    chunks: list[int],
    side: int,
    paths: list[Path],
    args: argparse.Namespace,
) -> dict[str, object]:
    """Kill ``--executor dask`` half-way, ``--resume`` it; the finished regions' chunks kept."""
    from iotune.measuring.measure import evict

    target = work / "resumed.zarr"
    partial, journal = (Path(f"{target}.iotune-{s}") for s in ("partial", "journal"))
    cmd = [*base, "-o", str(target), "--executor", "dask"]
    evict(paths)
    killed = kill_half_way(cmd, journal, timeout=args.nccopy_timeout * 4)
    _, before = journal_lines(journal)
    keys = [k for e in before for k in region_chunks(e, chunks, side)]
    stamps = {k: (partial / k).stat().st_mtime_ns for k in keys}
    resumed = run_sampled([*cmd, "--resume"], timeout=args.nccopy_timeout * 4)
    total, after = journal_lines(journal)
    written = [int(e["written"]) for e in after]  # type: ignore[call-overload]
    kept = (
        sum((target / k).stat().st_mtime_ns == t for k, t in stamps.items())
        if target.exists()
        else 0
    )
    result = {
        "killed": killed,
        "resumed": resumed,
        "total_seconds": round(killed["seconds"] + resumed["seconds"], 2),  # type: ignore[operator]
        "every_region_once": sorted(written) == list(range(total)),
        "finished_chunks_kept": f"{kept} of {len(stamps)}",
    }
    print("kill and resume", result, file=sys.stderr)
    shutil.rmtree(target, ignore_errors=True)
    return result


if __name__ == "__main__":
    main()
