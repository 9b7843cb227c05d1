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

from iotune.errors import ResultsError

#: cells (points x patterns x repeats) a dense copy may have
MAX_DENSE_CELLS = 20_000_000


def is_sparse(ds: xr.Dataset) -> bool:
    return str(ds.attrs.get("layout", "")) == "sparse" and "point" in ds.dims


def swept(ds: xr.Dataset, names: list[str]) -> tuple[str, ...]:
    """The named parameters that are coordinates along ``point``."""
    return tuple(n for n in names if n in ds.coords and ds[n].dims == ("point",))


def confirmed(flat: xr.Dataset) -> np.ndarray:
    """Points a search may recommend: measured as often as its confirmation asks.

    A point measured once is never recommended over one the search re-measured
    (up to ``search_confirm`` times); grids (no ``measurements``) are all eligible.
    """
    n = flat.sizes.get("point", 1)
    if "measurements" not in flat or "search_confirm" not in flat.attrs:
        return np.ones(n, dtype=bool)
    counts = np.nan_to_num(flat["measurements"].values.reshape(n))
    need = min(float(flat.attrs["search_confirm"]), float(counts.max(initial=0)))
    return counts >= need


def _values(ds: xr.Dataset, name: str) -> list[Any]:
    """The visited values of a parameter, in the spec's order where it is known."""
    seen = list(dict.fromkeys(v.item() if hasattr(v, "item") else v for v in ds[name].values))
    try:
        order = json.loads(str(ds.attrs.get("search_values") or "{}")).get(name, [])
    except ValueError:
        order = []
    return [v for v in order if v in seen] + [v for v in seen if v not in order]


def dense(ds: xr.Dataset, names: tuple[str, ...]) -> xr.Dataset:
    """The grid over the visited values of each parameter in ``names``.

    Raises
    ------
    ResultsError
        The grid would be too large to hold (select a part of the points first).
    """
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
    coords = {n: axes[n] for n in names}
    coords.update({d: ds[d].values for d in ("pattern", "repeat") if d in ds.coords})
    attrs = {k: v for k, v in ds.attrs.items() if k != "layout"}
    return xr.Dataset(data_vars, coords=coords, attrs=attrs)
