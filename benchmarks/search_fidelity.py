"""Tuning in machine time: multi-fidelity search and warm start, replayed offline.

For each grid recorded at several fidelities (``benchmarks/grids/*.nc`` with a
``fidelity`` dimension, made by ``record_grids.py``), every objective and
``--seeds`` seeds, this replays ``iotune tune`` (``iotune.app.tuning.replay_outcome``,
the path ``iotune tune --replay`` takes) with a **time** budget: ``--share``
(default 10 %) of the full-size grid's measured time, the sum of ``trial_s``
at fidelity 1.  Each trial is charged the wall time the grid recorded for that
configuration at that fidelity (pro rata when it stopped early).

- ``auto``: the spec as recorded, ``fidelity: [0.125, 0.5, 1]`` as rungs
  (multi-fidelity, early stopping on);
- ``auto-full``: the same search at full size only (``parameters.fidelity: 1``);
- ``auto-full-no-early-stop``: full size, every repeat run.

The figure is the *true* value of the recommended configuration: the grid's
median-based score at full size over the grid's best (as ``iotune recommend``
ranks it).

``--warm`` measures warm start instead: full-size searches budgeted in trials,
with and without a prior made of the same grid at fidelity 0.5 (a different
workload size of the same format); the figure is how many trials each took
until the configuration leading the search was >= 0.95 of the best.

    python benchmarks/search_fidelity.py                 # every multi-fidelity grid
    python benchmarks/search_fidelity.py --seeds 30 --json out.json
    python benchmarks/search_fidelity.py --warm --seeds 30
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

GRIDS = Path(__file__).resolve().parent / "grids"
#: name -> overrides of the recorded spec
STRATEGIES: dict[str, dict[str, Any]] = {
    "auto": {},
    "auto-full": {"parameters.fidelity": 1},
    "auto-full-no-early-stop": {"parameters.fidelity": 1, "search.early_stop": False},
}


def full_seconds(grid: Any) -> float:
    """The measured time of the full-size grid: every trial at fidelity 1."""
    return float(grid["trial_s"].sel(fidelity=grid["fidelity"].max()).sum())


def replay(grid: Any, overrides: dict[str, Any], prior: list | None = None) -> Any:
    from iotune.app.tuning import goal_of, grid_sweep, replay_outcome
    from iotune.search.prior import load_priors

    sweep = grid_sweep(grid, overrides, "grid")
    assert sweep.search is not None
    loaded = None
    if prior is not None:
        loaded = load_priors(prior, sweep, goal_of(sweep, sweep.search).weights)
    return replay_outcome(sweep, grid, prior=loaded)


def fidelity_rows(path: Path, objectives: list[str], seeds: range, share: float) -> list[dict]:
    from iotune.results.dataset import open_results
    from iotune.search.replay import fractions_of_best

    grid = open_results(path)
    budget = share * full_seconds(grid)
    rows = []
    for objective in objectives or list(grid.iotune.metrics):
        values = fractions_of_best(grid, objective)
        for name, extra in STRATEGIES.items():
            runs = []
            for seed in seeds:
                overrides = {
                    "search.objective": objective,
                    "search.seed": seed,
                    "search.budget": f"{budget:.3f}s",
                    **extra,
                }
                out = replay(grid, overrides)
                pick = out.leader
                runs.append(
                    {
                        "value": values.get(pick.trial.id, 0.0) if pick is not None else 0.0,
                        "seconds": out.seconds,
                        "trials": len(out.steps),
                        "full": sum(1 for s in out.steps if s.visit.fidelity in (None, 1.0)),
                        "early": sum(
                            1 for s in out.steps if s.result and s.result.stop == "stopped_early"
                        ),
                        "fallback": out.ladder.fallback,
                        "rho": {str(k): v for k, v in out.ladder.correlation.items()},
                    }
                )
            rows.append(_summary(path.stem, objective, name, budget, runs))
            print(_line(rows[-1]), file=sys.stderr, flush=True)
    return rows


def _summary(grid: str, objective: str, name: str, budget: float, runs: list[dict]) -> dict:
    values = [r["value"] for r in runs]
    return {
        "grid": grid,
        "objective": objective,
        "strategy": name,
        "budget_s": budget,
        "median": statistics.median(values),
        "share_090": sum(v >= 0.90 for v in values) / len(values),
        "share_095": sum(v >= 0.95 for v in values) / len(values),
        "worst": min(values),
        "spent_s": statistics.median(r["seconds"] for r in runs),
        "trials": statistics.median(r["trials"] for r in runs),
        "full_trials": statistics.median(r["full"] for r in runs),
        "stopped_early": statistics.median(r["early"] for r in runs),
        "fallbacks": sum(bool(r["fallback"]) for r in runs),
        "values": values,
        "runs": runs,
    }


def _line(row: dict[str, Any]) -> str:
    return (
        f"| {row['grid']} | {row['objective']} | {row['strategy']} | {row['budget_s']:.0f} | "
        f"{row['spent_s']:.0f} | {row['median']:.3f} | {row['share_090']:.0%} | "
        f"{row['share_095']:.0%} | {row['worst']:.3f} | {row['trials']:.0f} | "
        f"{row['full_trials']:.0f} | {row['stopped_early']:.0f} | {row['fallbacks']} |"
    )


HEADER = (
    "| grid | objective | strategy | budget (s) | spent (s, median) | median of best | "
    ">= 0.90 | >= 0.95 | worst | trials | full-size trials | stopped early | fallbacks |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def prior_slice(grid: Any, fidelity: float) -> Any:
    """The grid's measurements at ``fidelity`` as results of their own (a smaller workload)."""
    part = grid.sel(fidelity=fidelity).drop_vars("fidelity")
    swept = [n for n in str(grid.attrs["swept"]).split() if n != "fidelity"]
    workload = json.loads(grid.attrs["workload"])
    first = next(iter(workload["shape"]))
    workload["shape"][first] = math.ceil(workload["shape"][first] * fidelity)
    name = f"{grid.attrs.get('name', '')}@{fidelity:g}"
    part.attrs.update(swept=" ".join(swept), name=name, workload=json.dumps(workload))
    return part


def trials_to(out: Any, values: dict[str, float], level: float = 0.95) -> int | None:
    """Trials until the search's leader was at least ``level`` of the best (None: never)."""
    visits = {v.index: v for v in out.state.visits.values()}
    for n, step in enumerate(out.steps, start=1):
        if step.leader >= 0 and values.get(visits[step.leader].trial.id, 0.0) >= level:
            return n
    return None


def warm_rows(path: Path, objectives: list[str], seeds: range, trials: int) -> list[dict]:
    from iotune.results.dataset import open_results
    from iotune.search.replay import fractions_of_best

    grid = open_results(path)
    prior = prior_slice(grid, 0.5)
    rows = []
    for objective in objectives or list(grid.iotune.metrics):
        values = fractions_of_best(grid, objective)
        for name, priors in (("no prior", None), ("prior: fidelity 0.5", [prior])):
            needed = []
            for seed in seeds:
                overrides = {
                    "search.objective": objective,
                    "search.seed": seed,
                    "search.budget": trials,
                    "parameters.fidelity": 1,
                }
                needed.append(trials_to(replay(grid, overrides, priors), values))
            reached = [n for n in needed if n is not None]
            rows.append(
                {
                    "grid": path.stem,
                    "objective": objective,
                    "start": name,
                    "reached": len(reached) / len(needed),
                    "median_trials": statistics.median(n or trials + 1 for n in needed),
                    "needed": needed,
                }
            )
            row = rows[-1]
            print(
                f"| {row['grid']} | {objective} | {name} | {row['median_trials']} | "
                f"{row['reached']:.0%} |",
                file=sys.stderr,
                flush=True,
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("grids", nargs="*", type=Path)
    parser.add_argument("--objective", action="append", default=[])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--share", type=float, default=0.10)
    parser.add_argument("--warm", action="store_true", help="warm start instead")
    parser.add_argument("--trials", type=int, default=30, help="warm start: trial budget")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from iotune.results.dataset import open_results

    paths = args.grids or [
        p for p in sorted(GRIDS.glob("*.nc")) if "fidelity" in open_results(p).dims
    ]
    seeds = range(args.seeds)
    rows: list[dict] = []
    if not args.warm:
        print(HEADER, file=sys.stderr)
    for path in paths:
        if args.warm:
            rows += warm_rows(path, args.objective, seeds, args.trials)
        else:
            rows += fidelity_rows(path, args.objective, seeds, args.share)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
