"""The ``batches`` pattern against a hand-written multiprocessing reader (issue 32).

Both read the same samples (one time step each, in the order
``iotune.measuring.samples.batch_indices`` draws from the workload seed), in
the same batches, with the same number of worker processes, each worker
opening the file once with the same library (netCDF4, h5py or zarr) and
assembling whole batches; the same layout (each writes its file with the same
backend before every repeat's reads, untimed, as a trial does); a cold cache before every repeat
(``iotune.measuring.measure``'s ``prepare_cache``, the eviction iotune uses,
residency checked with mincore).

* iotune: ``iotune run`` of a spec with ``read.patterns: [batches]``,
  ``read.batches.loader: iotune`` and ``num_workers`` swept, in a new process as
  a user types it; its samples/s (``read_samples_per_s``) per repeat from results.nc.
* hand-written: a new process (``--hand``) doing what a user writes with
  ``multiprocessing`` the way torch's DataLoader does it: an index queue per
  worker (batch k to worker k % workers), one result queue, ``prefetch`` batches
  in flight per worker, batches put back in order; ``workers: 0`` reads in
  the process.  Timed from starting the workers to the last batch in hand, as
  iotune times it; a first repeat is a discarded warm-up, as iotune's.

Rounds alternate which goes first; the figure per worker count is the median
over rounds of (iotune's median samples/s / the hand-written reader's), with
a 95 % bootstrap interval over rounds (target >= 0.95).

    .venv/bin/python benchmarks/batches_vs_handwritten.py [--backend netcdf4]
        [--shape 240,256,256] [--chunks 1,256,256] [--workers 0,2,4]
        [--batch 16] [--batches 10] [--prefetch 2] [--repeats 3] [--rounds 4]
        [--hold-page-reporting]

On a VM with free page reporting, pass ``--hold-page-reporting`` (root), as
``fidelity.py``: whichever freed memory last pays for faulting it back
(docs/benchmarks.md, "This VM hands freed memory back to its host").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from fidelity import page_reporting_held


def spec_of(args: argparse.Namespace) -> dict[str, Any]:
    t, y, x = args.shape
    batches = {"sample": {"time": 1}, "batch": args.batch, "batches": args.batches, "shuffle": True}
    batches["loader"] = "iotune"  # iotune's own loader against the hand-written one
    return {
        "version": 1,
        "name": "batches-vs-hand",
        "workload": {"shape": {"time": t, "y": y, "x": x}, "dtype": "float32"},
        "backend": args.backend,
        "parameters": {
            "chunks": [args.chunks],
            "num_workers": args.workers,
            "prefetch_factor": [args.prefetch],
        },
        "read": {"patterns": ["batches"], "batches": batches},
        "measure": {"repeats": args.repeats, "noise_probes": 0},
    }


# --- the hand-written reader (what runs in the --hand process) ------------------------------


def open_variable(backend: str, path: str) -> Any:
    """The array, opened with the format's library as a user's Dataset.__init__ would."""
    if backend == "netcdf4":
        import netCDF4

        var = netCDF4.Dataset(path, "r").variables["data"]
        var.set_auto_maskandscale(False)
        return var
    if backend == "h5py":
        import h5py

        return h5py.File(path, "r")["data"]
    import zarr

    return zarr.open_array(path, path="data", mode="r", zarr_format=3)


def worker(backend: str, path: str, indices: Any, results: Any) -> None:
    var = open_variable(backend, path)  # once per worker
    while (job := indices.get()) is not None:
        k, batch = job
        results.put((k, np.stack([np.asarray(var[i : i + 1]) for i in batch])))


def load(backend: str, path: str, batches: list[list[int]], workers: int, prefetch: int) -> float:
    """Read every batch once; the seconds from starting the workers to the last batch."""
    t0 = time.perf_counter()
    if workers == 0:
        var = open_variable(backend, path)
        for batch in batches:
            data = np.stack([np.asarray(var[i : i + 1]) for i in batch])
            del data
        return time.perf_counter() - t0
    results: Any = multiprocessing.Queue()
    queues = [multiprocessing.Queue() for _ in range(workers)]
    procs = [
        multiprocessing.Process(target=worker, args=(backend, path, q, results), daemon=True)
        for q in queues
    ]
    for p in procs:
        p.start()
    sent = min(prefetch * workers, len(batches))
    for k in range(sent):
        queues[k % workers].put((k, batches[k]))
    held: dict[int, Any] = {}
    for k in range(len(batches)):
        while k not in held:
            got, data = results.get()
            held[got] = data
        del held[k]
        if sent < len(batches):
            queues[sent % workers].put((sent, batches[sent]))
            sent += 1
    total = time.perf_counter() - t0
    for q in queues:
        q.put(None)
    for p in procs:
        p.join()
    return total


def hand(args: argparse.Namespace) -> None:
    """The --hand process: writes its file, then samples/s per repeat for each worker count.

    Printed as JSON.
    """
    from iotune.measuring import measure
    from iotune.specfile.parse import load_spec

    sweep = load_spec(args.spec)
    batches = _batches(sweep)
    count = sum(len(b) for b in batches)
    out: dict[int, list[float]] = {}
    for workers in args.workers:
        rates = []
        for _ in range(args.repeats + 1):
            # written again before every repeat, as a trial writes its file before each
            # repeat's reads: here a file read again and again reads 3.4x faster than one
            # just written, cold as the guest's eviction and mincore say both are (most
            # likely the VM disk's cache on the host, which no eviction in the guest reaches)
            path = write_file(args.spec, Path(args.file))
            paths = [path] if args.backend != "zarr" else _files(path)
            cache, _fraction = measure.prepare_cache(paths, mode="cold", max_residency=0.05)
            if cache != "cold":
                raise SystemExit(f"the hand-written reader's file did not go cold: {cache}")
            rates.append(count / load(args.backend, str(path), batches, workers, args.prefetch))
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        out[workers] = rates[1:]
    print(json.dumps(out))


def _batches(sweep: Any) -> list[list[int]]:
    from iotune.measuring.samples import batch_indices

    assert sweep.read.batches is not None
    return batch_indices(sweep.workload, sweep.read.batches)


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


# --- the comparison -------------------------------------------------------------------------


def write_file(spec: Path, stem: Path) -> Path:
    """The hand-written reader's file (``stem`` + the backend's suffix), untimed.

    The same layout, written by the same backend, just before it is read, as
    iotune's trial writes its file just before it reads it.
    """
    from iotune.model.records import TrialResult, TrialTask
    from iotune.runner import placed, steps
    from iotune.runner.plan import make_plan
    from iotune.specfile.parse import load_spec

    sweep = load_spec(spec)
    trial = make_plan(sweep).trials[0]
    task = TrialTask(trial, sweep.workload, sweep.read, sweep.measure, str(stem.parent))
    backend = placed.make_backend(task)
    path = stem.with_name(stem.name + backend.suffix)
    steps.write_once(task, backend, path, TrialResult(trial.id, "ok"))  # type: ignore[arg-type]
    return path


def through_iotune(folder: Path, spec: Path, i: int, workers: list[int]) -> dict[int, list[float]]:
    import xarray as xr

    out = folder / f"out{i}"
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out), "--no-progress"]
    subprocess.run(cmd, check=True, cwd=folder, capture_output=True, text=True)
    with xr.open_dataset(out / "results.nc") as ds:
        rates = ds["read_samples_per_s"].sel(pattern="batches")
        others = [d for d in rates.dims if d not in ("num_workers", "repeat")]
        rates = rates.squeeze(others, drop=True)
        if "num_workers" not in rates.dims:
            rates = rates.expand_dims(num_workers=workers)  # one count: not a dimension
        found = {}
        for w in rates["num_workers"].values:
            found[int(w)] = [float(v) for v in np.atleast_1d(rates.sel(num_workers=w).values)]
        return found


def through_hand(args: argparse.Namespace, spec: Path, stem: Path) -> dict[int, list[float]]:
    cmd = [
        sys.executable, __file__, "--hand", "--spec", str(spec), "--file", str(stem),
        "--backend", args.backend, "--workers", ",".join(map(str, args.workers)),
        "--prefetch", str(args.prefetch), "--repeats", str(args.repeats),
    ]  # fmt: skip
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return {int(k): v for k, v in json.loads(done.stdout).items()}


def interval(ratios: list[float], seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    boot = [float(np.median(rng.choice(ratios, len(ratios)))) for _ in range(2000)]
    return float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))


def compare(args: argparse.Namespace, folder: Path) -> list[dict[str, Any]]:
    spec = folder / "spec.yaml"
    spec.write_text(yaml.safe_dump(spec_of(args), sort_keys=False))
    ratios: dict[int, list[float]] = {w: [] for w in args.workers}
    rates: dict[str, dict[int, list[float]]] = {"iotune": {}, "hand": {}}
    for i in range(args.rounds):
        got = {}
        for who in ("iotune", "hand") if i % 2 == 0 else ("hand", "iotune"):
            got[who] = (
                through_iotune(folder, spec, i, args.workers)
                if who == "iotune"
                else through_hand(args, spec, folder / f"hand{i}")
            )
            print(f"# round {i} {who}: {got[who]}", file=sys.stderr, flush=True)
        for w in args.workers:
            a, b = statistics.median(got["iotune"][w]), statistics.median(got["hand"][w])
            ratios[w].append(a / b)
            rates["iotune"].setdefault(w, []).append(a)
            rates["hand"].setdefault(w, []).append(b)
    rows = []
    for w in args.workers:
        low, high = interval(ratios[w])
        rows.append({
            "workers": w, "iotune": statistics.median(rates["iotune"][w]),
            "hand": statistics.median(rates["hand"][w]), "ratio": statistics.median(ratios[w]),
            "low": low, "high": high, "rounds": ratios[w],
        })  # fmt: skip
    return rows


def table(rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [
        "| workers | iotune samples/s | hand-written samples/s "
        "| iotune/hand (95 % interval) | >= 0.95 |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        ok = "yes" if r["ratio"] >= 0.95 else "no"
        lines.append(
            f"| {r['workers']} | {r['iotune']:.0f} | {r['hand']:.0f} | "
            f"{r['ratio']:.3f} [{r['low']:.3f}, {r['high']:.3f}] | {ok} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="netcdf4", choices=["netcdf4", "h5py", "zarr"])
    parser.add_argument("--shape", default="240,256,256", help="time,y,x (float32)")
    parser.add_argument("--chunks", default="1,256,256", help="the stored chunks")
    parser.add_argument("--workers", default="0,2,4")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--prefetch", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--hold-page-reporting", action="store_true", help="as fidelity.py (root)")
    parser.add_argument("--hand", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--spec", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.workers = [int(k) for k in args.workers.split(",")]
    if args.hand:
        hand(args)
        return
    args.shape = tuple(int(n) for n in args.shape.split(","))
    args.chunks = [int(n) for n in args.chunks.split(",")]
    held = page_reporting_held(args.hold_page_reporting)
    with held, tempfile.TemporaryDirectory(dir=".") as tmp:  # on the disk measured, not /tmp
        rows = compare(args, Path(tmp).resolve())
    print(table(rows, args))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
