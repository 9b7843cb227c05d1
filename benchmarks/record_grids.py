"""Record the grids of ``benchmarks/grids/`` that search_quality.py replays.

For each spec named (default: every ``benchmarks/grids/*.yaml``) this runs
``iotune run SPEC -o RUNS/NAME`` in a new process, as a user types it, and
copies the run's ``results.nc`` to ``benchmarks/grids/NAME.nc``.  The specs
interleave their repeats (``measure.order: interleaved``), so a slow spell of
the machine costs every point a little instead of one point all of its
repeats; a replayed search is judged against these medians, so they must not
carry the drift of the hour they were measured in.

On a VM with free page reporting pass ``--hold-page-reporting`` (root): with
it on, an eviction can hand pages back to the host and halve the next reads
(docs/benchmarks.md), which no order of repeats averages out.  A killed
recording resumes: run the same command again (``iotune run --resume``).

    .venv/bin/python benchmarks/record_grids.py [SPEC ...] [--runs DIR]
        [--hold-page-reporting]
    .venv/bin/python benchmarks/record_grids.py --summary   # describe the .nc files

The summary gives, per grid and metric, the points' relative IQR of repeats
(median and 90th percentile over the grid), the best point, whether it beats
the runner-up beyond noise, and how many points are within 0.95 and 0.90 of
it: what a search replayed on the grid has to find.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

# a sibling script: python puts benchmarks/ first on sys.path when running this one
from fidelity import page_reporting_held

GRIDS = Path(__file__).resolve().parent / "grids"


def record(spec: Path, runs: Path) -> float:
    """Run ``spec`` to ``runs/NAME`` and copy its results beside the spec; seconds taken."""
    out = runs / spec.stem
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out), "--no-progress"]
    if (out / "journal.jsonl").exists():
        cmd.append("--resume")
    start = time.monotonic()
    subprocess.run(cmd, check=True)
    seconds = time.monotonic() - start
    shutil.copyfile(out / "results.nc", spec.with_suffix(".nc"))
    return seconds


def summary(path: Path) -> list[str]:
    """What a replayed search meets on the grid at ``path``, a line per metric."""
    import numpy as np

    from iotune.results.dataset import open_results

    grid = open_results(path)
    counts = grid.iotune.counts()
    lines = [f"{path.stem}: {counts}; noise floor {grid.iotune.noise}"]
    for metric in grid.iotune.metrics:
        values = grid.iotune.metric(metric)
        with warnings.catch_warnings():  # not-applicable points are all NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            q1, mid, q3 = (values.quantile(q, dim="repeat") for q in (0.25, 0.5, 0.75))
        spread = ((q3 - q1) / mid).values.ravel()
        spread = spread[np.isfinite(spread)]
        ranking = grid.iotune.rank(metric)
        best = ranking.best
        scores = np.array([c.score for c in ranking.candidates]) / best.score
        sep = ranking.separation
        lines.append(
            f"  {metric}: spread {np.median(spread):.2f} ({np.percentile(spread, 90):.2f}); "
            f"best {best.label} {best.median[metric]:.4g} MiB/s; beats runner-up "
            f"{sep.runner_up if sep else '-'}: {sep.beats if sep else '-'} "
            f"(p = {sep.p_value if sep else float('nan'):.3f}); points >= 0.95 / 0.90: "
            f"{int((scores >= 0.95).sum())} / {int((scores >= 0.90).sum())} of {scores.size}"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", type=Path, help="default: benchmarks/grids/*.yaml")
    parser.add_argument("--runs", type=Path, default=GRIDS / "runs", help="run directories")
    parser.add_argument("--hold-page-reporting", action="store_true")
    parser.add_argument("--summary", action="store_true", help="describe the recorded grids")
    args = parser.parse_args()
    if args.summary:
        for path in [s.with_suffix(".nc") for s in args.specs] or sorted(GRIDS.glob("*.nc")):
            print("\n".join(summary(path)))
        return 0
    specs = args.specs or sorted(GRIDS.glob("*.yaml"))
    env_path = os.environ.get("PYTHONPATH", "")
    print(f"recording {len(specs)} grids with {sys.executable} (PYTHONPATH={env_path!r})")
    with page_reporting_held(args.hold_page_reporting):
        for spec in specs:
            seconds = record(spec, args.runs)
            print(f"{spec.stem}: {seconds / 60:.1f} min -> {spec.with_suffix('.nc')}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
