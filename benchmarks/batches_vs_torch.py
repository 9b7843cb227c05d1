"""iotune's ``batches`` figures against the exported class in a plain PyTorch loop (issue 41).

The path a user takes, each step a new process as the user types it:

1. ``iotune run`` of a tiny sweep: ``read.patterns: [batches]``, layouts
   (``chunks``) x ``num_workers``, a simulated accelerator ``step`` per batch;
   with torch installed the loader is torch's DataLoader over the exported class.
2. ``iotune recommend --objective read:batches --format json``: the
   ``torch_dataset`` text (the ``Dataset`` class) and ``torch_dataloader`` arguments.
3. ``iotune apply`` of the pick to the user's file, and ``apply --settings`` of
   every other layout, so each point has its file written by iotune's converter.
4. The plain loop (``--plain``, a new process per point): the exported class
   pasted into ``__main__``, ``DataLoader`` with the exported arguments (this
   point's ``num_workers``), and a training loop that sleeps ``step`` per batch.
   A cold cache before every repeat (``iotune.measuring.measure.prepare_cache``,
   as ``batches_vs_handwritten.py``); a first repeat is a discarded warm-up.

Both figures are the steady state: samples/s over the arrivals after the first
batch, and utilisation (MLPerf Storage: compute time / total time of that loop).
Printed: per point the two samples/s and their ratio (iotune / plain, target
about 1), both utilisations, and the top three points of each.

    .venv/bin/python benchmarks/batches_vs_torch.py [--shape 512,64,64]
        [--layouts 1x64x64,16x64x64] [--workers 0,2] [--batch 8] [--batches 64]
        [--prefetch 2] [--step 0.005] [--repeats 2]
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
from typing import Any

import numpy as np
import yaml


def iotune(*args: str | Path, cwd: Path) -> str:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, check=True, cwd=cwd, capture_output=True, text=True).stdout


def spec_of(args: argparse.Namespace) -> dict[str, Any]:
    t, y, x = args.shape
    batches = {"batch": args.batch, "batches": args.batches, "step": args.step}
    return {
        "version": 1,
        "name": "batches-vs-torch",
        "workload": {"shape": {"time": t, "y": y, "x": x}, "dtype": "float32"},
        "backend": "netcdf4",
        "parameters": {
            "chunks": [[int(n) for n in c.split("x")] for c in args.layouts],
            "num_workers": args.workers,
            "prefetch_factor": args.prefetch,
        },
        "read": {"patterns": ["batches"], "batches": batches},
        "measure": {"repeats": args.repeats, "noise_probes": 0},
    }


def user_file(path: Path, shape: tuple[int, ...]) -> Path:
    """The user's data: a netCDF file with one float32 variable ``data``."""
    import netCDF4

    with netCDF4.Dataset(path, "w") as ds:
        for name, size in zip(("time", "y", "x"), shape, strict=True):
            ds.createDimension(name, size)
        var = ds.createVariable("data", "f4", ("time", "y", "x"))
        var[:] = np.random.default_rng(0).normal(size=shape).astype("f4")
    return path


# --- the plain loop (what runs in the --plain process) -----------------------------------


def plain(args: argparse.Namespace) -> None:
    """A user's training loop over the exported class; prints samples/s and utilisation."""
    from torch.utils.data import DataLoader

    from iotune.measuring import measure

    namespace = sys.modules["__main__"].__dict__
    exec(Path(args.dataset).read_text(), namespace)  # pasted into the user's script
    kwargs = json.loads(args.loader)
    rates, busy = [], []
    for _ in range(args.repeats + 1):
        cache, _ = measure.prepare_cache([Path(args.file)], mode="cold", max_residency=0.05)
        if cache != "cold":
            raise SystemExit(f"the plain loop's file did not go cold: {cache}")
        loader = DataLoader(namespace["Dataset"](args.file), **kwargs)
        ready = []
        t0 = time.perf_counter()
        for k, batch in enumerate(loader):
            ready.append(time.perf_counter() - t0)
            del batch
            time.sleep(args.step)  # the model's step
            if k + 1 == args.batches:
                break
        span = ready[-1] - ready[0]
        rates.append((len(ready) - 1) * kwargs["batch_size"] / span)
        busy.append((len(ready) - 1) * args.step / span)
        del loader
    print(json.dumps({"samples_per_s": rates[1:], "utilisation": busy[1:]}))


def through_plain(args: argparse.Namespace, folder: Path, file: Path, kwargs: dict) -> dict:
    cmd = [sys.executable, __file__, "--plain", "--file", str(file)]
    cmd += ["--dataset", str(folder / "dataset.py"), "--loader", json.dumps(kwargs)]
    cmd += ["--batches", str(args.batches), "--step", str(args.step)]
    cmd += ["--repeats", str(args.repeats)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


# --- the comparison --------------------------------------------------------------------


def loader_kwargs(exported: dict[str, Any], workers: int, prefetch: int) -> dict[str, Any]:
    """The exported ``DataLoader`` arguments with this point's ``num_workers``."""
    kwargs = {
        k: v for k, v in exported.items() if k not in ("prefetch_factor", "persistent_workers")
    }
    kwargs["num_workers"] = workers
    if workers:
        kwargs |= {"prefetch_factor": prefetch, "persistent_workers": True}
    return kwargs


def compare(args: argparse.Namespace, folder: Path) -> tuple[list[dict[str, Any]], str]:
    import xarray as xr

    (folder / "spec.yaml").write_text(yaml.safe_dump(spec_of(args), sort_keys=False))
    source = user_file(folder / "user.nc", tuple(args.shape))
    iotune("run", "spec.yaml", "-o", "out", "--no-progress", cwd=folder)
    rec = json.loads(
        iotune("recommend", "out/results.nc", "--objective", "read:batches", "--format", "json",
               cwd=folder)
    )  # fmt: skip
    (folder / "dataset.py").write_text(rec["exports"]["torch_dataset"]["text"])
    exported = rec["exports"]["torch_dataloader"]["value"]
    pick = rec["winner"]["settings"]["chunks"]
    iotune("apply", "out/results.nc", source, "-o", f"{pick}.nc", "--objective", "read:batches",
           cwd=folder)  # fmt: skip
    ds = xr.open_dataset(folder / "out" / "results.nc").sel(pattern="batches")
    rows = []
    for layout in args.layouts:
        file = folder / f"{layout}.nc"
        if not file.exists():
            iotune("apply", "--settings", f"backend=netcdf4 chunks={layout}", source, "-o", file,
                   cwd=folder)  # fmt: skip
        for workers in args.workers:
            point = ds.sel(chunks=layout, num_workers=workers)
            found = through_plain(
                args, folder, file, loader_kwargs(exported, workers, args.prefetch)
            )
            rows.append({
                "layout": layout, "num_workers": workers,
                "iotune": float(point["read_samples_per_s"].median()),
                "plain": statistics.median(found["samples_per_s"]),
                "iotune_util": float(point["read_utilisation"].median()),
                "plain_util": statistics.median(found["utilisation"]),
            })  # fmt: skip
    return rows, str(ds.attrs.get("provenance_loader"))


def table(rows: list[dict[str, Any]], loader: str) -> str:
    lines = [
        f"iotune's loader: {loader}",
        f"{'layout':<12} {'workers':>7} {'iotune/s':>9} {'plain/s':>9} {'ratio':>6} "
        f"{'util iotune':>11} {'util plain':>10}",
    ]
    for r in rows:
        lines.append(
            f"{r['layout']:<12} {r['num_workers']:>7} {r['iotune']:>9.0f} {r['plain']:>9.0f} "
            f"{r['iotune'] / r['plain']:>6.2f} {r['iotune_util']:>11.0%} {r['plain_util']:>10.0%}"
        )
    for who in ("iotune", "plain"):
        top = sorted(rows, key=lambda r: -r[who])[:3]
        lines.append(f"top three ({who}): " + ", ".join(
            f"{r['layout']}/w{r['num_workers']}" for r in top))  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", type=lambda s: [int(n) for n in s.split(",")], default=[512, 64, 64])
    p.add_argument("--layouts", type=lambda s: s.split(","), default=["1x64x64", "16x64x64"])
    p.add_argument("--workers", type=lambda s: [int(n) for n in s.split(",")], default=[0, 2])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--batches", type=int, default=64)
    p.add_argument("--prefetch", type=int, default=2)
    p.add_argument("--step", type=float, default=0.005)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--file", help=argparse.SUPPRESS)
    p.add_argument("--dataset", help=argparse.SUPPRESS)
    p.add_argument("--loader", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.plain:
        plain(args)
        return
    with tempfile.TemporaryDirectory(prefix="batches-vs-torch-") as folder:
        rows, loader = compare(args, Path(folder))
    print(table(rows, loader))


if __name__ == "__main__":
    main()
