"""Adaptive repeats on a real sweep: how many trials reach the asked precision.

Runs ``iotune run`` (a new process, as a user types it) of a sweep with
``measure: {repeats: auto, precision: P, max_repeats: M}`` and reads back what
the results say of each trial: the 95 % interval of each metric's median
(``*_ci_low``/``*_ci_high``), how many timed repeats it took (``repeats_used``)
and why it stopped (``repeats_stop``: ``precision`` or ``max_repeats``).  The
figure issue 14 asks for: the share of trials that end with every interval's
half-width within the precision, or at ``max_repeats`` (and say so).

    .venv/bin/python benchmarks/adaptive_repeats.py [sweeps/quick.yaml] [--precision 5%]
        [--max-repeats 20] [--scratch DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

import iotune

ROOT = Path(__file__).resolve().parents[1]


def adaptive_spec(source: Path, precision: str, max_repeats: int, work: Path) -> Path:
    """A copy of ``source`` whose repeats are adaptive."""
    data = yaml.safe_load(source.read_text())
    data.setdefault("measure", {}).update(
        {"repeats": "auto", "precision": precision, "max_repeats": max_repeats}
    )
    spec = work / source.name
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    return spec


def per_trial(ds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each successful trial's widest relative half-width over every metric, read
    through ``ds.iotune`` (medians and intervals), its repeats used and why it stopped."""
    ranking = ds.iotune.rank(weights={m: 1.0 for m in ds.iotune.metrics})
    width, used, stop = [], [], []
    for cand in ranking.candidates:
        halves = ((hi - lo) / 2 / cand.median[m] for m, (lo, hi) in cand.ci.items())
        width.append(max(halves, default=np.inf))  # no interval: not precise
        point = ds.sel(cand.coords)
        used.append(int(point["repeats_used"]))
        stop.append(str(point["repeats_stop"].values))
    return np.array(width), np.array(used), np.array(stop)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", nargs="?", type=Path, default=ROOT / "sweeps" / "quick.yaml")
    parser.add_argument("--precision", default="5%")
    parser.add_argument("--max-repeats", type=int, default=20)
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="iotune-adaptive-", dir=args.scratch) as tmp:
        work = Path(tmp)
        spec = adaptive_spec(args.spec, args.precision, args.max_repeats, work)
        out = work / "out"
        cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out)]
        cmd += ["--scratch", str(work), "--no-progress"]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        width, used, stop = per_trial(iotune.open_results(out))
    limit = float(args.precision.rstrip("%")) / 100
    precise = width <= limit + 1e-12
    report = {
        "trials": len(width),
        "wall_s": round(wall, 1),
        "stopped_at_precision": int((stop == "precision").sum()),
        "stopped_at_max_repeats": int((stop == "max_repeats").sum()),
        "within_precision": int(precise.sum()),
        "within_precision_or_at_max": int((precise | (stop == "max_repeats")).sum()),
        "precision_stop_but_wider": int(((stop == "precision") & ~precise).sum()),
        "repeats_used": {
            "min": int(used.min()),
            "median": float(np.median(used)),
            "max": int(used.max()),
        },
        "half_width_median": round(float(np.median(width)), 4),
    }
    share = report["within_precision_or_at_max"] / max(report["trials"], 1)
    print(json.dumps(report, indent=1))
    print(f"{share:.0%} of trials within {args.precision} or at max_repeats={args.max_repeats}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
