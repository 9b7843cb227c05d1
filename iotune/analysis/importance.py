"""Which knobs matter: parameter importance from measured points (a grid's or a search's).

Each successful point's objective score (the weighted geometric mean of its
metrics' medians over repeats) is given to optuna as a finished trial, and
optuna's PED-ANOVA evaluator (:class:`optuna.importance.PedAnovaImportanceEvaluator`,
Watanabe et al., IJCAI 2023) says how much each parameter decides whether a
configuration is among the best tenth: shares that add up to 100 %.  fANOVA
(optuna's variance decomposition) needs scikit-learn, which iotune does not
depend on; PED-ANOVA needs nothing beyond optuna and works from the few
points a search visits.

A parameter that a point did not apply (``level`` with codec ``none``: the backend
records it as ``None`` in the point's effective settings, and the point's label
leaves it out, :func:`iotune.results.labels.applied`) is left out of that point's
trial: the search space is conditional.  Optuna's PED-ANOVA (Conditional PED-ANOVA,
optuna 5) then splits the trials into the regime where the parameter is set and the
one where it is not, gives the unset regime no importance and weighs the set one by
its share of the best tenth.  So ``level`` gets a share only from how the points with
a codec reach the best tenth, not from the ``none`` points, whose one stored level
(the first) would otherwise look like a preference when ``none`` is the fastest.
Giving every point every value (the old way) credited ``level`` with what ``codec``
did.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from iotune.core.errors import RecommendError
from iotune.core.extras import missing, require
from iotune.core.logs import quiet
from iotune.results.labels import applied
from iotune.results.objective import Candidate, parse_objective

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
    #: the parameters some points did not apply, with the points that did (their share's basis)
    applied: dict[str, int] = field(default_factory=dict)
    #: why importance cannot be computed here: ``needs optuna (pip install ...)``; empty if it can
    unavailable: str = ""

    def text(self) -> str:
        """``what matters for write: codec 80 %, level 0 % (12 points, level on the 9 it
        applies to; ...)``, or ``which knobs matter: needs optuna (pip install ...)``."""
        if self.unavailable:
            return f"which knobs matter: {self.unavailable}"
        if not self.shares:
            return f"what matters for {self.objective}: {self.note}"
        shown = ", ".join(f"{name} {share * 100:.0f} %" for name, share in self.shares.items())
        basis = "".join(
            f", {name} on the {count} it applies to" for name, count in self.applied.items()
        )
        return (
            f"what matters for {self.objective}: {shown} "
            f"({self.points} points{basis}; {self.method})"
        )


def importance(
    ds: xr.Dataset,
    objective: str | None = None,
    *,
    weights: str | Mapping[str, float] | None = None,
) -> Importance:
    """Parameter importance of the results ``ds`` under an objective (as ``recommend``'s).

    Without optuna (the search extra) the :class:`Importance` says so in
    ``unavailable`` instead of raising: the rest of a recommendation needs no extra.
    """
    if weights is None and "=" in str(objective or ""):
        objective, weights = None, objective
    goal = parse_objective(ds.iotune.metrics, objective, weights)
    chosen = goal.weights or {}
    shown = ", ".join(f"{m}={w:g}" for m, w in chosen.items())
    name = next(iter(chosen)) if len(chosen) == 1 else shown
    lacking = missing("optuna", extra="search")
    if lacking:  # an extra's answer: the pick beside it needs none
        return Importance(name, unavailable=lacking)
    params = [p for p in ds.iotune.swept if p != "fidelity"]  # the workload, not a knob
    try:  # every successful point at full size with each metric (cheap trials rank apart)
        cands = ds.iotune.rank_by(goal).candidates
    except RecommendError:
        cands = []
    points = [_applied(c, params) for c in cands]
    varying = [p for p in params if len({pt[p] for pt in points if p in pt}) > 1]
    if len(cands) < MIN_POINTS or not varying:
        why = "too few successful points" if len(cands) < MIN_POINTS else "nothing varies"
        return Importance(name, points=len(cands), note=why)
    scored = [(pt, math.log(c.score)) for pt, c in zip(points, cands, strict=True)]
    counts = {p: sum(p in pt for pt in points) for p in varying}
    return Importance(
        name,
        shares=_ped_anova(scored, varying),
        points=len(cands),
        applied={p: n for p, n in counts.items() if n < len(cands)},
    )


def _applied(cand: Candidate, params: list[str]) -> dict[str, str]:
    """The point's values of ``params`` that it applied, as text (optuna's categories)."""
    coords = {p: cand.coords[p] for p in params if p in cand.coords}
    return {p: str(v) for p, v in applied(coords, cand.settings).items()}


def _ped_anova(scored: list[tuple[dict[str, str], float]], params: list[str]) -> dict:
    require("optuna", extra="search", feature="parameter importance")
    import optuna
    from optuna.distributions import BaseDistribution, CategoricalDistribution

    dists: dict[str, BaseDistribution] = {
        p: CategoricalDistribution(sorted({pt[p] for pt, _s in scored if p in pt})) for p in params
    }
    with quiet("optuna"):  # "A new study created in memory"
        study = optuna.create_study(direction="maximize")
    study.add_trials(
        [
            optuna.trial.create_trial(
                # a trial holds only what its point applied: the space is conditional
                params={p: pt[p] for p in params if p in pt},
                distributions={p: dists[p] for p in params if p in pt},
                value=score,
            )
            for pt, score in scored
        ]
    )
    # PED-ANOVA is "experimental" in optuna 5, and warns of a regime with one point
    # (a parameter applied once): warnings for the developer, not the user's terminal
    with quiet("optuna"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = optuna.importance.get_param_importances(
            study, evaluator=optuna.importance.PedAnovaImportanceEvaluator(), params=params
        )
    total = sum(found.values())
    if not total > 0:
        return {p: 0.0 for p in params}
    return {p: v / total for p, v in sorted(found.items(), key=lambda kv: -kv[1])}
