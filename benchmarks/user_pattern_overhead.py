"""The user's code as a read pattern against a plain loop doing the same (issue 32).

``iotune run`` (a new process, as a user types it) sweeps a monthly mean over a
box as ``read.patterns: [{name: climatology, call: ...}]`` on netCDF4 and Zarr
with two chunk shapes.  The plain loop writes the same files once with the same
backends, then, per repeat, evicts them (``posix_fadvise``, as iotune does) and
times what a user's script does: ``xr.open_dataset(path, engine=...)`` (Zarr:
``xr.open_zarr(..., consolidated=False)``, as iotune stores it), the function,
``.compute()``, close.  The figure is the plain
loop's median seconds over iotune's, per configuration: 1 means iotune reports
what the user's own loop sees (the issue asks >= 0.95 of the plain loop's
throughput, i.e. iotune's time at most 1/0.95 of the loop's).

    .venv/bin/python benchmarks/user_pattern_overhead.py [--repeats 7] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

CODE = """
import numpy as np


def monthly_mean(ds):
    box = ds["data"].isel(y=slice(32, 160), x=slice(64, 192))
    month = ("time", np.arange(box.sizes["time"]) // 30)
    return box.assign_coords(month=month).groupby("month").mean()
"""

SHAPE = {"time": 360, "y": 256, "x": 256}
CHUNKS = [[30, 64, 64], [1, 256, 256]]
BACKENDS = ["netcdf4", "zarr"]


def write_spec(folder: Path, repeats: int) -> Path:
    spec = {
        "version": 1,
        "name": "user-overhead",
        "workload": {"shape": SHAPE, "dtype": "int16"},
        "backend": BACKENDS,
        "parameters": {"chunks": CHUNKS},
        "read": {"patterns": [{"name": "climatology", "call": "myanalysis:monthly_mean"}]},
        "measure": {"repeats": repeats, "noise_probes": 0},
    }
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def through_iotune(folder: Path, repeats: int) -> dict[tuple[str, str], float]:
    """Median seconds a call, per (backend, chunks), as ``iotune run`` measured them."""
    import xarray as xr

    spec = write_spec(folder, repeats)
    out = folder / "out"
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out), "--no-progress"]
    subprocess.run(cmd, check=True, cwd=folder, capture_output=True, text=True)
    ds = xr.open_dataset(out / "results.nc")
    found = {}
    for backend in BACKENDS:
        for chunks in ds["chunks"].values:
            cell = ds["read_s"].sel(backend=backend, chunks=chunks, pattern="climatology")
            found[(backend, str(chunks))] = float(cell.median("repeat"))
    ds.close()
    return found


def plain_loop(folder: Path, repeats: int) -> dict[tuple[str, str], float]:
    """Median seconds a call of the user's own loop over the same files, cold each time."""
    import xarray as xr

    from iotune.measuring import measure
    from iotune.model.records import TrialResult
    from iotune.runner import steps
    from iotune.runner.plan import make_plan
    from iotune.specfile.parse import load_spec

    sys.path.insert(0, str(folder))
    from myanalysis import monthly_mean  # type: ignore[import-not-found]

    sweep = load_spec(write_spec(folder, repeats))
    found = {}
    for trial in make_plan(sweep).trials:
        task = _task(sweep, trial, folder)
        backend = steps.make_backend(task)
        path = folder / f"plain-{trial.id}{backend.suffix}"
        steps.write_once(task, backend, path, TrialResult(trial.id, "ok"))  # type: ignore[arg-type]
        times = []
        for _ in range(repeats + 1):  # the first is a warm-up, as iotune's
            measure.evict(backend.paths(path))  # type: ignore[attr-defined]
            t0 = time.perf_counter()
            if trial.backend == "zarr":
                ds = xr.open_zarr(path, chunks=None, consolidated=False)
            else:
                ds = xr.open_dataset(path, engine="netcdf4")
            monthly_mean(ds).compute()
            ds.close()
            times.append(time.perf_counter() - t0)
        key = (trial.backend, str(trial.params["chunks"]))
        found[key] = statistics.median(times[1:])
        backend.remove(path)  # type: ignore[attr-defined]
    return found


def _task(sweep, trial, folder: Path):
    from iotune.model.records import TrialTask

    return TrialTask(trial, sweep.workload, sweep.read, sweep.measure, str(folder))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        folder = Path(tmp).resolve()
        (folder / "myanalysis.py").write_text(CODE)
        cli = through_iotune(folder, args.repeats)
        plain = plain_loop(folder, args.repeats)
    rows = []
    print(f"{'backend':<9} {'chunks':<11} {'iotune s':>9} {'plain s':>9} {'plain/iotune':>12}")
    for key in sorted(cli):
        ratio = plain[key] / cli[key]
        rows.append({"backend": key[0], "chunks": key[1], "iotune_s": cli[key],
                     "plain_s": plain[key], "ratio": ratio})  # fmt: skip
        print(f"{key[0]:<9} {key[1]:<11} {cli[key]:>9.4f} {plain[key]:>9.4f} {ratio:>12.3f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
