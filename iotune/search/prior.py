"""Warm start: earlier results (``search.prior``) seed a search.

Each earlier results file (a grid or a search, this machine or another, this
workload or another) is ranked under the search's own objective, at full size
only; its configurations are mapped into this space (parameters it swept that
this search also sweeps; a parameter it did not sweep takes its setting there
when this space has that value, else the spec's ``baseline``, else the first
value).  Its best :data:`SEEDS` configurations are measured first.  Once they
are, the prior's scores are put on this run's scale (shifted by the median
difference between what was measured here and what the prior said for the same
configurations) and given to the sampler, counting less than new measurements
(:class:`~iotune.search.strategies.PriorWeights`).  Results whose parameters do
not overlap the space are refused in one line.
"""

from __future__ import annotations

import json
import math
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.core.errors import RecommendError, ResultsError, SpecError
from iotune.model.spec import Sweep
from iotune.search.space import Dimension, Space
from iotune.search.state import State

if TYPE_CHECKING:
    import xarray as xr

#: configurations of each prior measured first
SEEDS = 3


@dataclass(frozen=True)
class PriorPoint:
    """A configuration of earlier results, in this space's labels, and its log score
    relative to that prior's best (0 is its best)."""

    coords: dict[str, Any]
    score: float
    source: str
    seed: bool = False

    def matches(self, coords: Mapping[str, Any]) -> bool:
        """Whether ``coords`` (a visit's) are this configuration."""
        return all(str(coords.get(k)) == str(v) for k, v in self.coords.items())


@dataclass(frozen=True)
class Prior:
    """One earlier results file: its points (best first) and how it differs from this run."""

    source: str
    points: tuple[PriorPoint, ...]
    overlap: tuple[str, ...]
    same_host: bool
    same_workload: bool
    host: str
    workload: str


def load_priors(
    paths: Sequence[str | xr.Dataset], sweep: Sweep, weights: Mapping[str, float]
) -> list[Prior]:
    """Every prior of ``paths`` (results files, directories or Datasets) for ``sweep``.

    Raises
    ------
    UsageError
        A prior is missing or unreadable, lacks a metric of the objective, or
        shares no searched parameter with the space (``search.prior: ...``).
    """
    from iotune.results.dataset import open_results

    space = Space(sweep)
    found = []
    for item in paths:
        source = str(item) if isinstance(item, str | Path) else str(item.attrs.get("name", "prior"))
        try:
            ds = open_results(item) if isinstance(item, str | Path) else item
        except ResultsError as err:
            raise SpecError("search.prior", str(err)) from err
        found.append(_prior(ds, source, space, sweep, weights))
    return found


def _prior(
    ds: xr.Dataset, source: str, space: Space, sweep: Sweep, weights: Mapping[str, float]
) -> Prior:
    swept = [n for n in ds.iotune.swept if n != "fidelity"]
    overlap = tuple(n for n in space.names if n in swept)
    if not overlap:
        raise SpecError(
            "search.prior",
            f"{source} sweeps {', '.join(swept) or 'nothing'}; none of it is "
            f"searched here (allowed: results sweeping any of {', '.join(space.names)})",
        )
    try:
        ranking = ds.iotune.rank(dict(weights))
    except RecommendError as err:
        raise SpecError("search.prior", f"{source}: {err}") from err
    points: dict[tuple, PriorPoint] = {}
    for cand in ranking.candidates:
        coords = _mapped(cand.coords, cand.settings, space, sweep)
        if coords is None or not cand.score > 0:
            continue
        key = tuple(sorted((k, str(v)) for k, v in coords.items()))
        score = math.log(cand.score)
        if key not in points or points[key].score < score:
            points[key] = PriorPoint(coords, score, source)
    ordered = sorted(points.values(), key=lambda p: -p.score)
    ordered = [PriorPoint(p.coords, p.score, source, i < SEEDS) for i, p in enumerate(ordered)]
    host = str(ds.iotune.provenance.get("host", ""))
    workload = str(ds.attrs.get("workload", ""))
    return Prior(
        source,
        tuple(ordered),
        overlap,
        same_host=host == socket.gethostname(),
        same_workload=_same_workload(workload, sweep),
        host=host,
        workload=workload,
    )


def _mapped(
    coords: Mapping[str, Any], settings: Mapping[str, Any], space: Space, sweep: Sweep
) -> dict[str, Any] | None:
    """The prior's configuration as this space labels it; None when a value is outside it."""
    out: dict[str, Any] = {}
    for dim in space.dims:
        if dim.name in coords:
            label = _label(dim, coords[dim.name])
            if label is None:
                return None
        else:
            label = _label(dim, settings.get(dim.name))
            if label is None:
                wanted = sweep.baseline.get(dim.name)
                label = wanted if wanted in dim.labels else dim.labels[0]
        out[dim.name] = label
    return out


def _label(dim: Dimension, value: Any) -> Any:
    for label in dim.labels:
        if str(label) == str(value) or _numeric_equal(label, value):
            return label
    return None


def _numeric_equal(a: Any, b: Any) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def _same_workload(text: str, sweep: Sweep) -> bool:
    try:
        return json.loads(text) == sweep.workload.to_dict()
    except ValueError:
        return False


def calibrate(priors: Sequence[Prior], state: State, at: float | None) -> list[dict[str, Any]]:
    """Each prior's offset to this run's scale, from its seeds measured here at ``at``.

    Returns one record per prior (what the results keep), with ``points`` (to
    tell the sampler, dropped by the caller) and ``offset`` (None: no seed was
    measured, so its points are left out).
    """
    measured = {
        v.config: state.goal.score(v.ok) for v in state.visits.values() if v.ok and v.fidelity == at
    }
    records = []
    for prior in priors:
        gaps = []
        for point in prior.points:
            key = tuple(sorted((k, str(v)) for k, v in point.coords.items()))
            if point.seed and key in measured and math.isfinite(measured[key]):
                gaps.append(measured[key] - point.score)
        offset = float(np.median(gaps)) if gaps else None
        records.append(
            {
                "source": prior.source,
                "overlap": list(prior.overlap),
                "same_host": prior.same_host,
                "host": prior.host,
                "same_workload": prior.same_workload,
                "workload": prior.workload,
                "seeds_measured": len(gaps),
                "offset": offset,
                "points": list(prior.points) if offset is not None else [],
            }
        )
    return records
