"""Which knobs matter: parameter importance from measured points (a grid's or a search's).

Each successful point's objective score (the weighted geometric mean of its
metrics' medians over repeats) is given to optuna as a finished trial, and
optuna's PED-ANOVA evaluator (:class:`optuna.importance.PedAnovaImportanceEvaluator`,
Watanabe et al., IJCAI 2023) says how much each parameter decides whether a
configuration is among the best tenth: shares that add up to 100 %.  fANOVA
(optuna's variance decomposition) needs scikit-learn, which iotune does not
depend on; PED-ANOVA needs nothing beyond optuna and works from the few
points a search visits.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iotune.core.extras import require
from iotune.core.logs import quiet
from iotune.results.objective import parse_objective

if TYPE_CHECKING:
    import xarray as xr

METHOD = "PED-ANOVA importance in optuna: how much each decides reaching the best tenth"
#: fewer successful points than this say nothing about importance
MIN_POINTS = 4


@dataclass
class Importance:
    """Importance shares per parameter (sum 1), largest first; empty when unknown."""

    objective: str
    shares: dict[str, float] = field(default_factory=dict)
    points: int = 0
    method: str = METHOD
    note: str = ""

    def text(self) -> str:
        """``what matters for read:timeseries (...): chunks 71 %, chunk_cache 3 %``."""
        if not self.shares:
            return f"what matters for {self.objective}: {self.note}"
        shown = ", ".join(f"{name} {share * 100:.0f} %" for name, share in self.shares.items())
        return f"what matters for {self.objective}: {shown} ({self.points} points; {self.method})"


def importance(
    ds: xr.Dataset,
    objective: str | None = None,
    *,
    weights: str | Mapping[str, float] | None = None,
) -> Importance:
    """Parameter importance of the results ``ds`` under an objective (as ``recommend``'s)."""
    if weights is None and "=" in str(objective or ""):
        objective, weights = None, objective
    chosen = parse_objective(ds.iotune.metrics, objective, weights).weights or {}
    shown = ", ".join(f"{m}={w:g}" for m, w in chosen.items())
    name = next(iter(chosen)) if len(chosen) == 1 else shown
    params = [p for p in ds.iotune.swept if p != "fidelity"]  # the workload, not a knob
    rows = [r for r in ds.iotune.points() if r.get("status", "ok") == "ok"]
    if "fidelity" in ds.coords:  # cheap trials rank on their own scale: full size only
        rows = [r for r in rows if float(r["fidelity"]) >= float(ds["fidelity"].max())]
    scored = [(r, _score(r, chosen)) for r in rows]
    scored = [(r, s) for r, s in scored if math.isfinite(s)]
    varying = [p for p in params if len({str(r[p]) for r, _s in scored}) > 1]
    if len(scored) < MIN_POINTS or not varying:
        why = "too few successful points" if len(scored) < MIN_POINTS else "nothing varies"
        return Importance(name, points=len(scored), note=why)
    shares = _ped_anova(scored, varying)
    return Importance(name, shares=shares, points=len(scored))


def _score(row: Mapping[str, Any], weights: Mapping[str, float]) -> float:
    total, logs = sum(weights.values()), 0.0
    for metric, weight in weights.items():
        value = row.get(metric)
        if value is None or not value > 0:
            return math.nan
        logs += weight * math.log(value)
    return logs / total


def _ped_anova(scored: list[tuple[Mapping[str, Any], float]], params: list[str]) -> dict:
    require("optuna", extra="search", feature="parameter importance")
    import optuna
    from optuna.distributions import BaseDistribution, CategoricalDistribution

    dists: dict[str, BaseDistribution] = {
        p: CategoricalDistribution(sorted({str(r[p]) for r, _s in scored})) for p in params
    }
    with quiet("optuna"):  # "A new study created in memory"
        study = optuna.create_study(direction="maximize")
    study.add_trials(
        [
            optuna.trial.create_trial(
                params={p: str(r[p]) for p in params}, distributions=dists, value=score
            )
            for r, score in scored
        ]
    )
    with quiet("optuna"), warnings.catch_warnings():  # PED-ANOVA is "experimental" in optuna 5
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        found = optuna.importance.get_param_importances(
            study, evaluator=optuna.importance.PedAnovaImportanceEvaluator()
        )
    total = sum(found.values())
    if not total > 0:
        return {p: 0.0 for p in params}
    return {p: v / total for p, v in sorted(found.items(), key=lambda kv: -kv[1])}
