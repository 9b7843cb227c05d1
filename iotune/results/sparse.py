"""Results stored sparsely (an adaptive search): one ``point`` dimension, parameters as coords.

A search over a space of 10^6 points keeps only the points it measured
(attribute ``layout: sparse``, see :mod:`iotune.search.results`).  ``ds.iotune``
reads such a Dataset like a grid through the helpers here; :func:`dense` builds
the grid of the visited values (for plots), filling the points never measured
with NaN and status ``pending``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import xarray as xr

from iotune.core.errors import ResultsError
from iotune.results.objective import Candidate, Objective, Ranking
from iotune.results.objective import rank as rank_candidates

#: cells (points x patterns x repeats) a dense copy may have
MAX_DENSE_CELLS = 20_000_000


def is_sparse(ds: xr.Dataset) -> bool:
    return str(ds.attrs.get("layout", "")) == "sparse" and "point" in ds.dims


def swept(ds: xr.Dataset, names: list[str]) -> tuple[str, ...]:
    """The named parameters that are dimensions, or (sparse) coordinates along ``point``."""
    if not is_sparse(ds):
        return tuple(d for d in names if d in ds.dims)
    return tuple(n for n in names if n in ds.coords and ds[n].dims == ("point",))


def rank(ds: xr.Dataset, goal: Objective, cands: list[Candidate], alpha: float) -> Ranking:
    """:func:`iotune.results.objective.rank` of the :func:`eligible` candidates; all listed."""
    ranking = rank_candidates(goal, eligible(ds, cands), alpha)
    ranking.candidates = cands
    return ranking


def eligible(ds: xr.Dataset, cands: list[Any]) -> list[Any]:
    """The candidates a search may recommend: measured as often as it confirms.

    A point measured once is never recommended over one the search re-measured
    (up to ``search_confirm`` times); for grids every candidate is eligible.
    """
    if not is_sparse(ds) or "measurements" not in ds or "search_confirm" not in ds.attrs:
        return cands
    names = swept(ds, str(ds.attrs.get("swept", "")).split())
    keys = zip(*(ds[n].values.tolist() for n in names), strict=True)
    counts = dict(zip(keys, np.nan_to_num(ds["measurements"].values).tolist(), strict=True))
    measured = [counts.get(tuple(c.coords[n] for n in names), 0.0) for c in cands]
    need = min(float(ds.attrs["search_confirm"]), max(measured, default=0.0))
    return [c for c, n in zip(cands, measured, strict=True) if n >= need]


def _values(ds: xr.Dataset, name: str) -> list[Any]:
    """The visited values of a parameter, in the spec's order where it is known."""
    seen = list(dict.fromkeys(v.item() if hasattr(v, "item") else v for v in ds[name].values))
    try:
        order = json.loads(str(ds.attrs.get("search_values") or "{}")).get(name, [])
    except ValueError:
        order = []
    return [v for v in order if v in seen] + [v for v in seen if v not in order]


def dense(ds: xr.Dataset, names: tuple[str, ...]) -> xr.Dataset:
    """The grid over the visited values of each parameter in ``names`` (a grid: itself).

    Raises
    ------
    ResultsError
        The grid would be too large to hold (select a part of the points first).
    """
    if not is_sparse(ds):
        return ds
    axes = {n: _values(ds, n) for n in names}
    shape = tuple(len(v) for v in axes.values())
    extra = math.prod(s for d, s in ds.sizes.items() if d not in ("point", "trial"))
    if math.prod(shape) * extra > MAX_DENSE_CELLS:
        raise ResultsError(
            f"a dense grid of the visited values would have {math.prod(shape):,} points; "
            "select fewer points (ds.isel(point=...)) before plotting"
        )
    where = tuple(
        np.array([axes[n].index(v.item() if hasattr(v, "item") else v) for v in ds[n].values])
        for n in names
    )
    data_vars = {}
    for name, var in ds.data_vars.items():
        if "trial" in var.dims or "point" not in var.dims:
            continue
        var = var.transpose("point", ...)
        fill: Any = np.nan if var.dtype.kind in "fiu" else ""
        if name == "status":
            fill = "pending"
        kind = float if var.dtype.kind in "iu" else var.dtype
        out = np.full(shape + var.shape[1:], fill, dtype=kind)
        out[where] = var.values
        data_vars[name] = ((*names, *var.dims[1:]), out, var.attrs)
    coords: dict[str, Any] = {n: axes[n] for n in names}
    coords.update({d: ds[d].values for d in ("pattern", "repeat") if d in ds.coords})
    attrs = {k: v for k, v in ds.attrs.items() if k != "layout"}
    return xr.Dataset(data_vars, coords=coords, attrs=attrs)
