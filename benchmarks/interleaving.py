"""Interleaved against back-to-back repeats on the same sweep, through the CLI.

Runs ``iotune run`` of a sweep (default ``sweeps/quick.yaml``) with
``measure.order: interleaved`` and ``measure.order: sequential``, alternating,
``--runs`` times each, with ``--repeats`` fixed repeats and ``--probes`` noise
probes.  For each run it reports:

- the noise floor the run measured (``ds.iotune.noise``: the reference
  configuration probed through the run, 95 % interval of its median over the
  median) and the probes' range over their median;
- the spread of the repeats of every trial (median over trials of the range
  over the median), which drift between repeats widens when they run apart;
- whether the first timed repeat is still an outlier after the warm-up: per
  trial, repeat 0 over the median of the others, and how often repeat 0 is the
  slowest (by chance: 1 in ``--repeats``).

Run:

    .venv/bin/python benchmarks/interleaving.py [--spec sweeps/quick.yaml] [--runs 2]
        [--repeats 5] [--probes 8] [--scratch DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

import iotune


def run_once(spec: dict, order: str, work: Path, scratch: Path | None) -> dict:
    spec = {**spec, "measure": {**spec.get("measure", {}), "order": order}}
    path = work / f"{order}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    out = work / order
    cmd = [sys.executable, "-m", "iotune", "run", str(path), "-o", str(out), "--overwrite"]
    cmd += ["--no-progress", *(["--scratch", str(scratch)] if scratch else [])]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return figures(iotune.open_results(out))


def _relative_range(values: np.ndarray) -> float:
    values = values[np.isfinite(values)]
    return float((values.max() - values.min()) / np.median(values)) if values.size > 1 else np.nan


def figures(ds) -> dict:
    """Noise floor, probe range, repeat spread and first-repeat figures of one run."""
    out: dict = {"noise_floor": ds.iotune.noise}
    probes = {"write": ds["noise_write_MiBps"].values}
    for pattern in ds["pattern"].values:
        probes[f"read:{pattern}"] = ds["noise_read_MiBps"].sel(pattern=pattern).values
    out["probe_range"] = {m: _relative_range(v) for m, v in probes.items()}
    ok = ds["status"] == "ok"
    spread, first, slowest = {}, {}, {}
    for metric in ds.iotune.metrics:
        da = ds.iotune.metric(metric).where(ok)
        flat = da.stack(point=list(ds.iotune.swept)).transpose("point", "repeat").values
        flat = flat[np.isfinite(flat).all(axis=1)]
        spread[metric] = float(np.median([_relative_range(row) for row in flat]))
        first[metric] = float(np.median(flat[:, 0] / np.median(flat[:, 1:], axis=1)))
        slowest[metric] = float(np.mean(flat.argmin(axis=1) == 0))
    out.update(repeat_range=spread, first_over_rest=first, first_is_slowest=slowest)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=Path("sweeps/quick.yaml"))
    parser.add_argument("--runs", type=int, default=2, help="runs of each order (default 2)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--probes", type=int, default=8)
    parser.add_argument("--scratch", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    spec = yaml.safe_load(args.spec.read_text())
    spec["measure"] = {
        **spec.get("measure", {}),
        "repeats": args.repeats,
        "noise_probes": args.probes,
    }
    results: dict[str, list[dict]] = {"interleaved": [], "sequential": []}
    with tempfile.TemporaryDirectory(prefix="iotune-interleaving-") as tmp:
        for i in range(args.runs):
            orders = ["interleaved", "sequential"] if i % 2 == 0 else ["sequential", "interleaved"]
            for order in orders:
                results[order].append(run_once(spec, order, Path(tmp), args.scratch))
    for order, runs in results.items():
        print(f"\n{order} ({len(runs)} runs of {args.spec.name}, {args.repeats} repeats):")
        for key in ("noise_floor", "probe_range", "repeat_range", "first_over_rest"):
            metrics = runs[0][key]
            shown = ", ".join(
                f"{m} {statistics.median(r[key][m] for r in runs):.3f}" for m in metrics
            )
            print(f"  {key:<17} {shown}")
        slow = statistics.median(statistics.mean(r["first_is_slowest"].values()) for r in runs)
        chance = 1 / args.repeats
        print(f"  first repeat is the slowest in {slow:.0%} of trials (chance {chance:.0%})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
