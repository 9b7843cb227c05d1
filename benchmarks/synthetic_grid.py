"""Synthetic recorded grids: the results schema with a known truth and realistic noise.

For tests and for judging search strategies before real grids exist.  Each
applicable point's true throughput per metric is a product of one factor per
parameter value and a random interaction; each of its ``repeats`` is the truth
times log-normal noise, with an occasional outlier (a lucky or an unlucky
repeat), as on a shared machine.  Built through :func:`iotune.results.dataset.to_dataset`,
so the files are ordinary ``iotune run`` results.

    python benchmarks/synthetic_grid.py OUT.nc --seed 0 --noise 0.15
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

QUICK = Path(__file__).resolve().parents[1] / "sweeps" / "quick.yaml"
#: a 150-point space of quick.yaml (chunks x codec x level x cache x shuffle)
SPACE_150 = {
    "parameters.chunks": [[64, 32, 32], [8, 128, 128], [16, 64, 64], [1, 256, 256], [4, 256, 256]],
    "parameters.codec": ["none", "zlib", "blosc-lz4", "bzip2", "blosc-zstd"],
    "parameters.level": [1, 5, 9],
    "parameters.chunk_cache": ["1MiB", "64MiB"],
    "measure.repeats": 5,
}


def synthetic_grid(
    overrides: dict[str, Any] | None = None,
    *,
    seed: int = 0,
    noise: float = 0.15,
    outliers: float = 0.05,
    interaction: float = 0.1,
    spread: float = 0.3,
    scramble: bool = False,
) -> Any:
    """A results Dataset of ``quick.yaml`` changed by ``overrides`` (default :data:`SPACE_150`).

    With ``parameters.fidelity`` among the overrides, a trial at fidelity ``f``
    takes ``0.3 + 4 f`` seconds (``trial_s``) and ranks like full size up to its
    own interaction term; ``scramble`` makes every fidelity below full size rank
    at random (what a search must notice and fall back from).
    """
    from iotune.app.api import load_spec
    from iotune.model.records import TrialResult
    from iotune.results.dataset import to_dataset
    from iotune.runner.plan import make_plan

    sweep = load_spec(QUICK, overrides=overrides if overrides is not None else SPACE_150)
    plan = make_plan(sweep)
    rng = np.random.default_rng(seed)
    metrics = ["write", *(f"read:{p}" for p in sweep.read.patterns)]
    factors = {
        (m, p.name, v): rng.lognormal(0, spread)
        for m in metrics
        for p in sweep.parameters
        for v in p.labels()
    }
    labels = {p.name: dict(zip(p.values, p.labels(), strict=True)) for p in sweep.parameters}
    done = {}
    for trial in plan.trials:
        truth = {}
        for m in metrics:
            value = 200.0 * rng.lognormal(0, interaction)
            share = float(trial.params.get("fidelity", 1.0))
            if scramble and share < 1:
                value *= rng.lognormal(0, 3 * spread)  # no relation to full size
            for name, v in trial.params.items():
                if scramble and share < 1 and name != "fidelity":
                    continue
                table = labels.get(name, {})
                key = (m, name, table.get(v, v) if not isinstance(v, list) else v)
                value *= factors.get(key, 1.0)
            truth[m] = value

        def draw(m: str, truth: dict[str, float] = truth) -> float:
            x = truth[m] * rng.lognormal(0, noise)
            return x * (1.6 if rng.random() < outliers else 1.0)

        n = sweep.measure.most
        write = [{"MiBps": draw("write"), "s": 1.0, "cpu_s": 0.5} for _ in range(n)]
        run = {"s": 1.0, "cpu_s": 0.5, "resident_fraction": 0.0, "ops_per_s": 1.0}
        run |= {"cache": "cold", "bytes": 1 << 20, "ops": 1}
        reads = {
            p: [{**run, "MiBps": draw(f"read:{p}")} for _ in range(n)] for p in sweep.read.patterns
        }
        size = int(sweep.workload.nbytes / rng.uniform(1, 4))
        done[trial.id] = TrialResult(
            trial.id,
            "ok",
            write=write,
            reads=reads,
            file_bytes=size,
            raw_bytes=sweep.workload.nbytes,
            busy_s=0.3 + 4 * float(trial.params.get("fidelity", 1.0)),
        )
    return to_dataset(plan, done, provenance={"host": "synthetic"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=0.15)
    parser.add_argument("--spread", type=float, default=0.3, help="sigma of each factor")
    args = parser.parse_args()
    from iotune.results.dataset import save

    ds = synthetic_grid(seed=args.seed, noise=args.noise, spread=args.spread)
    save(ds, args.out)
    print(f"{args.out}: {ds.iotune.counts()}")


if __name__ == "__main__":
    main()
