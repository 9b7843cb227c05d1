"""A search's results: the visited points, sparse, in the results schema.

The Dataset is what :func:`iotune.results.dataset.to_dataset` builds for a plan
whose one dimension is ``point`` (the configurations visited, in the order
first visited) with each swept parameter a coordinate along it, so a space of
10^6 points stores only the points measured.  Every measurement of a point is
pooled along ``repeat``.  On top (attribute ``layout: sparse``):

- ``measurements`` (point): how many trials measured the point;
- ``search_point``, ``search_kind``, ``search_score``, ``search_leader`` along
  ``trial``: the trials in the order asked, whether each explored or
  re-measured, its own score and which point led once it was told;
- attributes ``search_strategy``, ``search_seed``, ``search_budget``,
  ``search_objective``, ``search_values`` (every value of each parameter, for
  densifying) and more;
- the pick: ``search_recommended`` (JSON coordinates), ``search_recommended_label``
  (as ``recommend`` labels it), ``search_recommended_trial`` and ``search_tie`` (how a
  tie among the leaders was broken, empty without one), ``search_undecided`` (the
  "cannot decide at this noise" answer, empty when decided).  It is what ``iotune
  recommend`` picks from these results under the search's objective: the same
  ranking and the same tie-break (:func:`iotune.results.ties.pick_of`), not the
  search's running leader, which ranks by score alone.

``ds.iotune`` reads it like a grid; ``ds.iotune.dense()`` makes the grid of the
visited values for plots.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from iotune.core.errors import RecommendError
from iotune.model.objective import Objective
from iotune.model.parameters import PARAMETERS
from iotune.model.records import TrialResult
from iotune.model.spec import Sweep
from iotune.results import ties
from iotune.results.dataset import to_dataset
from iotune.runner.plan import GridPoint, Plan
from iotune.search.outcome import Outcome
from iotune.search.space import Space
from iotune.search.state import CONFIRM, Visit

if TYPE_CHECKING:
    import xarray as xr


def pooled(visit: Visit) -> TrialResult:
    """Every measurement of a visit as one result: the repeats one after another."""
    ok = visit.ok
    if not ok:
        last = visit.results[-1] if visit.results else None
        error = last.error if last is not None else "not measured"
        return TrialResult(visit.trial.id, "failed", error)
    reads: dict[str, list[dict[str, Any]]] = {}
    for result in ok:
        for pattern, runs in result.reads.items():
            reads.setdefault(pattern, []).extend(runs)
    return dataclasses.replace(
        ok[0],
        id=visit.trial.id,
        write=[w for r in ok for w in r.write],
        reads=reads,
        started=min(r.started for r in ok),
        ended=max(r.ended for r in ok),
        busy_s=sum(r.seconds for r in visit.results),
        # one trial stopped early makes the pooled figure less precise than its count says
        stop="stopped_early" if any(r.stop == "stopped_early" for r in ok) else ok[0].stop,
    )


def search_dataset(
    sweep: Sweep, outcome: Outcome, *, provenance: Mapping[str, str] | None = None
) -> xr.Dataset:
    """The sparse results Dataset of a finished (or interrupted) search."""
    import numpy as np

    visits = sorted(outcome.state.visits.values(), key=lambda v: v.index)
    done = {v.trial.id: pooled(v) for v in visits if v.results}
    most = max([len(r.write) for r in done.values()] + [sweep.measure.most])
    measure = dataclasses.replace(sweep.measure, repeats=most, max_repeats=most)
    wide = dataclasses.replace(sweep, measure=measure)
    points = tuple(GridPoint({"point": v.index}, v.trial.id) for v in visits)
    plan = Plan(wide, ("point",), {"point": tuple(range(len(visits)))}, points, _trials(visits))
    ds = to_dataset(plan, done, provenance=provenance)
    names = list(Space(sweep).coord_names)
    ds = ds.assign_coords({n: ("point", [v.coords[n] for v in visits]) for n in names})
    for name in names:  # units and labels from the registry, as a grid's coordinates have
        if name in PARAMETERS:
            ds[name].attrs.update(PARAMETERS[name].attrs())
    ds["measurements"] = ("point", np.array([v.measured for v in visits], dtype=float))
    ds["measurements"].attrs["long_name"] = (
        "trials that measured the point (re-measurements pooled)"
    )
    ds = ds.assign(_order(outcome))
    ds.attrs.update(_attrs(sweep, outcome, names))
    ds.attrs.update(_pick(ds, outcome, visits))
    return ds


def _pick(ds: xr.Dataset, outcome: Outcome, visits: list[Visit]) -> dict[str, str]:
    """The pick's attributes: what ``recommend`` names from these results, and why."""
    try:
        found = ties.pick_of(ds, Objective.from_search(outcome.search))
    except RecommendError:  # nothing succeeded, or nothing within the search's limits
        return dict.fromkeys(PICK_ATTRS, "")
    coords = found.winner.coords
    trial = next((v.trial.id for v in visits if _plain(v.coords) == coords), "")
    return {
        "search_recommended": json.dumps(coords),
        "search_recommended_label": found.winner.label,
        "search_recommended_trial": trial,
        "search_tie": found.note,
        "search_undecided": found.undecided_text,
    }


#: the attributes :func:`_pick` sets
PICK_ATTRS = (
    "search_recommended",
    "search_recommended_label",
    "search_recommended_trial",
    "search_tie",
    "search_undecided",
)


def _plain(coords: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _json(v) for k, v in coords.items()}


def _trials(visits: list[Visit]) -> tuple:
    return tuple(v.trial for v in visits)


def _order(outcome: Outcome) -> dict[str, Any]:
    import numpy as np

    steps = outcome.steps
    scores = [math.exp(s.score) if math.isfinite(s.score) else math.nan for s in steps]
    goal = outcome.state.goal
    found = sorted({"calls/s" if m in goal.per_call else "MiB/s" for m in goal.weights})
    unit = f"{' and '.join(found)} (weighted geometric mean of the objective's metrics)"
    return {
        "search_point": ("trial", np.array([s.visit.index for s in steps], dtype=int)),
        "search_kind": (
            "trial",
            np.array([s.kind for s in steps], dtype=object),
            {
                "long_name": "explore (a new point), prior (a point of earlier results), promote "
                "or control (to full size: the best, or a check on the cheap rung's ranking) "
                "or remeasure (a leader again)"
            },
        ),
        "search_score": (
            "trial",
            np.array(scores, dtype=float),
            {"units": unit, "long_name": "the trial's own objective score"},
        ),
        "search_leader": (
            "trial",
            np.array([s.leader for s in steps], dtype=int),
            {"long_name": "point leading (best confirmed pooled score) after the trial"},
        ),
        "search_seconds": (
            "trial",
            np.array([s.seconds if s.result else math.nan for s in steps], dtype=float),
            {"units": "s", "long_name": "the trial's wall time (what it cost the budget)"},
        ),
    }


def _attrs(sweep: Sweep, outcome: Outcome, names: list[str]) -> dict[str, Any]:
    search = outcome.search
    space = Space(sweep)
    values = {d.name: [_json(v) for v in d.labels] for d in space.dims}
    if space.rungs:
        values["fidelity"] = list(space.rungs)
    return {
        "layout": "sparse",
        "swept": " ".join(names),
        "spec_digest": sweep.digest(),
        "repeats": sweep.measure.most,
        "search_strategy": search.strategy,
        "search_seed": search.seed,
        "search_budget": outcome.budget,
        "search_budget_unit": outcome.limit.unit,
        "search_spent": outcome.spent,
        "search_seconds": outcome.seconds,
        "search_trials": len(outcome.steps),
        **outcome.policy_attrs(),  # the rungs, the prior...
        "search_objective": search.objective
        or "default (your own read pattern, else batches, timeseries, the first read, write)",
        "search_weights": json.dumps(dict(outcome.state.goal.weights)),
        "search_limits": json.dumps(dict(outcome.state.goal.limits)),
        "search_remeasure": search.remeasure,
        "search_confirm": CONFIRM,
        "search_space_size": outcome.space_size,
        "search_applicable": outcome.applicable,
        "search_values": json.dumps(values),
    }


def _json(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
