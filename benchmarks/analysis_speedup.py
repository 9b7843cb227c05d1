"""The best layout for the analysis people run, against the layouts they get anyway (issue 32).

Everything goes through the CLI as a user types it: a spec file per run,
``iotune run`` in a new process, then ``iotune recommend --objective read:W
--format json`` per workload ``W``; the table takes the winner and the
``vs_baselines`` entries of pattern ``W`` (median MiB/s ratio and its 95 %
bootstrap interval) from that JSON, nothing is recomputed here.  The runs:

* ``builtin``: ``full``, ``spatial``, ``timeseries`` and a monthly mean over a
  box (``{name: climatology, call: myanalysis:monthly_mean}``, opened without
  dask), over the swept layouts;
* ``aligned`` / ``split``: the climatology with ``dask_chunks: [storage]`` (one
  dask chunk per stored chunk) and with ``dask_chunks: [{time: 25, y: 100}]``
  (``--split``: extents that are not multiples of any swept chunk's, so every
  layout's stored chunks are split, the case xarray warns about); the split
  each trial recorded (``dask_chunks_split`` in its file properties)
  is shown for the winner;
* ``batches-wK``: the ``batches`` pattern (random single time steps, shuffled)
  with ``workers: K`` for each K of ``--workers``.

Each run sweeps the same layouts (``--backends`` x chunk shapes x ``--codecs``;
the ``batches`` runs without the time-series chunks, which make every sample
read the whole array) and measures ``baselines: [library, dask-auto, balanced, cloud]`` beside them,
with the same repeats and the same cold cache; a baseline takes the run's other
parameters (its ``dask_chunks``, its ``workers``).

    .venv/bin/python benchmarks/analysis_speedup.py [--shape 120,256,256] [--repeats 3]
        [--backends netcdf4,zarr] [--codecs none,zlib] [--workers 0,2,4]
        [--batch 8] [--batches 12]
        [--split time=25,y=100] [--keep DIR [--report]] [--json FILE]
        [--hold-page-reporting]

``--keep DIR --report`` (same options) prints the table of runs kept earlier
without measuring again; ``--runs NAME,...`` runs (or reports) only those.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from fidelity import page_reporting_held

CODE = """
import numpy as np


def monthly_mean(ds):
    # a box of a quarter of each side, months of 30 steps: a climatology of a region
    ny, nx = ds.sizes["y"], ds.sizes["x"]
    box = ds["data"].isel(y=slice(ny // 8, ny // 8 + ny // 4), x=slice(nx // 4, nx // 2))
    month = ("time", np.arange(box.sizes["time"]) // 30)
    return box.assign_coords(month=month).groupby("month").mean()
"""

CLIMATOLOGY = {"name": "climatology", "call": "myanalysis:monthly_mean"}
BASELINES = ["library", "dask-auto", "balanced", "cloud"]


def chunk_shapes(shape: tuple[int, int, int], *, series: bool = True) -> list[list[int]]:
    """The swept chunk shapes: maps, time series (unless ``series`` is false), two boxes."""
    t, y, x = shape
    return [[1, y, x], *([[t, 16, 16]] if series else []), [30, 64, 64], [min(t, 120), 32, 32]]


def default_split(shape: tuple[int, int, int]) -> dict[str, int]:
    """Dask chunks no swept chunk's extent is a multiple of: time 25, y 100 (odd if smaller)."""
    t, y, _ = shape
    return {"time": 25 if t > 25 else (t // 2) | 1, "y": 100 if y > 100 else (y // 2) | 1}


def spec_of(
    name: str, args: argparse.Namespace, read: dict, extra: dict, *, series: bool = True
) -> dict[str, Any]:
    t, y, x = args.shape
    chunks = chunk_shapes(args.shape, series=series)
    return {
        "version": 1,
        "name": name,
        "workload": {"shape": {"time": t, "y": y, "x": x}, "dtype": "float32"},
        "backend": args.backends,
        "parameters": {"chunks": chunks, "codec": args.codecs, **extra},
        "read": read,
        "baselines": BASELINES,
        "measure": {"repeats": args.repeats, "noise_probes": 0},
    }


def runs(args: argparse.Namespace) -> dict[str, tuple[dict[str, Any], list[str]]]:
    """Each run's spec and the workloads (patterns) the table takes from it."""
    out = {
        "builtin": (
            spec_of(
                "builtin", args, {"patterns": ["full", "spatial", "timeseries", CLIMATOLOGY]}, {}
            ),
            ["full", "spatial", "timeseries", "climatology"],
        ),
        "aligned": (
            spec_of("aligned", args, {"patterns": [CLIMATOLOGY]}, {"dask_chunks": ["storage"]}),
            ["climatology"],
        ),
        "split": (
            spec_of("split", args, {"patterns": [CLIMATOLOGY]}, {"dask_chunks": [args.split]}),
            ["climatology"],
        ),
    }
    batches = {"sample": {"time": 1}, "batch": args.batch, "batches": args.batches, "shuffle": True}
    for k in args.workers:
        read = {"patterns": ["batches"], "batches": batches}
        # a time-series chunk makes every sample read the whole array: left out here
        spec = spec_of(f"batches-w{k}", args, read, {"workers": [k]}, series=False)
        out[f"batches-w{k}"] = (spec, ["batches"])
    return {name: run for name, run in out.items() if not args.runs or name in args.runs}


def iotune(*argv: str, cwd: Path) -> str:
    cmd = [sys.executable, "-m", "iotune", *argv]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:2])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def split_of(results: Path, label: dict[str, str]) -> str:
    """The dask split the winner's trial recorded ('' when aligned, '-' without dask)."""
    import xarray as xr

    with xr.open_dataset(results) as ds:
        cell = ds["file_properties"].sel({k: v for k, v in label.items() if k in ds.dims})
        props = json.loads(str(cell.values.flat[0]) or "{}")
    if "dask_chunks_read" not in props:
        return "-"
    return props.get("dask_chunks_split", "") or "none"


def samples_of(results: Path, label: dict[str, str]) -> float:
    import xarray as xr

    with xr.open_dataset(results) as ds:
        cell = ds["read_samples_per_s"].sel({k: v for k, v in label.items() if k in ds.dims})
        return float(cell.sel(pattern="batches").median("repeat"))


def row(name: str, pattern: str, results: Path, rec: dict[str, Any]) -> dict[str, Any]:
    winner = rec["winner"]
    settings = winner["settings"]
    # with several formats swept a baseline is named per format (library:netcdf4); the
    # JSON lists the winner's format's, the layouts a user of that format gets anyway
    speed = {
        v["baseline"].split(":")[0]: (v["speedup"], v["low"], v["high"], v["size_ratio"])
        for v in rec["vs_baselines"]
        if v["pattern"] == pattern
    }
    out = {
        "run": name,
        "workload": pattern,
        "layout": f"{settings['backend']} chunks={settings['chunks']} codec={settings['codec']}",
        "dask_chunks": settings.get("dask_chunks") or "-",
        "split": split_of(results, winner["coords"]),
        "MiBps": winner["median"][f"read:{pattern}"],
        "vs": {b: speed.get(b) for b in BASELINES},
        "baseline_layouts": rec.get("baseline_layouts", {}),
    }
    if pattern == "batches":
        out["samples_per_s"] = samples_of(results, winner["coords"])
    return out


def measure(args: argparse.Namespace, folder: Path, *, run: bool = True) -> list[dict[str, Any]]:
    """Run every spec in ``folder`` (unless ``run`` is false), then recommend per workload."""
    (folder / "myanalysis.py").write_text(CODE)
    rows = []
    for name, (spec, patterns) in runs(args).items():
        path = folder / f"{name}.yaml"
        out = folder / name
        if run:
            path.write_text(yaml.safe_dump(spec, sort_keys=False))
            print(f"# iotune run {path.name} -o {name}", file=sys.stderr, flush=True)
            iotune("run", path.name, "-o", name, "--no-progress", cwd=folder)
        for pattern in patterns:
            text = iotune(
                "recommend", str(out / "results.nc"), "--objective", f"read:{pattern}",
                "--format", "json", cwd=folder,
            )  # fmt: skip
            rows.append(row(name, pattern, out / "results.nc", json.loads(text)))
    return rows


def cell(v: tuple[float, float, float, float] | None) -> str:
    return "-" if v is None else f"{v[0]:.2f}x [{v[1]:.2f}, {v[2]:.2f}]"


def table(rows: list[dict[str, Any]]) -> str:
    head = ["workload", "run", "best layout", "dask chunks (split)", "best", *BASELINES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        best = f"{r['MiBps']:.1f} MiB/s"
        if "samples_per_s" in r:
            best += f", {r['samples_per_s']:.0f} samples/s"
        dask = r["dask_chunks"]
        if dask != "-":
            dask += " (aligned)" if r["split"] in ("none", "-") else f" (splits {r['split']})"
        vs = [cell(r["vs"][b]) for b in BASELINES]
        lines.append(f"| {r['workload']} | {r['run']} | {r['layout']} | {dask} | {best} | "
                     + " | ".join(vs) + " |")  # fmt: skip
    layouts = {}
    for r in rows:
        for b, text in r["baseline_layouts"].items():
            layouts.setdefault(b, set()).add(text)
    lines.append("")
    lines.extend(f"- {b}: {'; '.join(sorted(t))}" for b, t in layouts.items())
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="120,256,256", help="time,y,x (float32)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backends", default="netcdf4,zarr")
    parser.add_argument("--codecs", default="none,zlib")
    parser.add_argument("--workers", default="0,2,4")
    parser.add_argument("--batch", type=int, default=8, help="samples a batch")
    parser.add_argument("--batches", type=int, default=12, help="batches a repeat")
    parser.add_argument(
        "--split", help="the splitting dask chunks (default time=25,y=100, odd ones if smaller)"
    )
    parser.add_argument("--keep", type=Path, help="run here and keep the specs and results")
    parser.add_argument("--report", action="store_true", help="only the table of --keep's runs")
    parser.add_argument("--runs", help="only these runs, e.g. batches-w0,batches-w2 (default all)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--hold-page-reporting", action="store_true", help="as fidelity.py (root)")
    args = parser.parse_args()
    args.shape = tuple(int(n) for n in args.shape.split(","))
    args.backends = args.backends.split(",")
    args.codecs = args.codecs.split(",")
    args.workers = [int(k) for k in args.workers.split(",")]
    args.runs = args.runs.split(",") if args.runs else []
    args.split = (
        {d: int(n) for d, n in (p.split("=") for p in args.split.split(","))}
        if args.split
        else default_split(args.shape)
    )
    with page_reporting_held(args.hold_page_reporting and not args.report):
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            rows = measure(args, args.keep.resolve(), run=not args.report)
        else:
            with tempfile.TemporaryDirectory(dir=".") as tmp:  # on the disk measured, not /tmp
                rows = measure(args, Path(tmp).resolve())
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    main()
