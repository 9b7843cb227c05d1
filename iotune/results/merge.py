"""Combine the results of sweeps that measured the same workload.

Two sweeps of one workload (say, codecs on Monday and chunk caches on Tuesday)
become one Dataset over the union of their coordinates.  A parameter one sweep
swept and the other held fixed becomes a dimension of both, at the fixed
value; grid points neither sweep measured are ``pending`` with a reason.
Every input's attributes (its spec and provenance) are kept in
``merged_from``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.core.errors import ResultsError
from iotune.results import baselines
from iotune.results.accessor import plain  # and ds.iotune

if TYPE_CHECKING:
    import xarray as xr

#: measurement settings that make two sweeps' numbers incomparable when they differ
_MEASURE_ATTRS = ("cache", "fsync")
_STRING_VARS = ("status", "error", "trial_id", "effective", "read_cache")
_NOT_MEASURED = "not measured by any of the merged sweeps"


def merge(sources: Sequence[str | Path | xr.Dataset]) -> xr.Dataset:
    """Merge results of sweeps that share a workload into one Dataset.

    Parameters
    ----------
    sources
        Two or more results files, output directories or Datasets.

    Returns
    -------
    xarray.Dataset
        Dimensions are the union of the inputs' swept parameters, coordinates
        the union of their values.  Where several inputs measured the same grid
        point, the first that measured it successfully wins.  Attributes agree
        with the inputs where they agree; ``merged_from`` holds each input's
        attributes (spec text, provenance) as JSON.

    Raises
    ------
    ResultsError
        Fewer than two inputs; the workloads or measurement settings differ
        (the message names the field); a parameter swept in one input is not
        set in another.
    """
    from iotune.results.dataset import open_results

    if len(sources) < 2:
        raise ResultsError(f"merge needs at least two results files, got {len(sources)}")
    names = [
        str(s) if isinstance(s, str | Path) else f"input {i + 1}" for i, s in enumerate(sources)
    ]
    datasets = [open_results(s) if isinstance(s, str | Path) else s for s in sources]
    _check_compatible(datasets, names)
    dims = _union_dims(datasets)
    # each sweep's noise probes describe its own run, not a point of the merged grid
    bare = [baselines.strip(ds.drop_dims("probe", errors="ignore")) for ds in datasets]
    expanded = [_expand(ds, dims, name) for ds, name in zip(bare, names, strict=True)]
    combined = baselines.keep(_combine(expanded, dims), datasets)
    combined.attrs = _merged_attrs(datasets, names, dims)
    return combined


def _check_compatible(datasets: list[xr.Dataset], names: list[str]) -> None:
    first = datasets[0]
    base = first.iotune.workload
    for ds, name in zip(datasets[1:], names[1:], strict=True):
        other = ds.iotune.workload
        field = _first_difference(base, other, "workload")
        if field is not None:
            path, a, b = field
            raise ResultsError(
                f"cannot merge: {path} differs ({a!r} in {names[0]}, {b!r} in {name}); "
                "only sweeps of the same workload can be merged"
            )
        for key in _MEASURE_ATTRS:
            a, b = first.attrs.get(key), ds.attrs.get(key)
            if a != b:
                raise ResultsError(
                    f"cannot merge: measure.{key} differs ({a!r} in {names[0]}, {b!r} in {name})"
                )


def _first_difference(a: Any, b: Any, path: str) -> tuple[str, Any, Any] | None:
    """The dotted path and values of the first place where ``a`` and ``b`` differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            found = _first_difference(a.get(key), b.get(key), f"{path}.{key}")
            if found is not None:
                return found
        return None
    return None if a == b else (path, a, b)


def _union_dims(datasets: list[xr.Dataset]) -> list[str]:
    dims: list[str] = []
    for ds in datasets:
        dims += [d for d in ds.iotune.swept if d not in dims]
    backends = {ds.iotune.backends for ds in datasets}
    if len(backends) > 1 and "backend" not in dims:
        dims.append("backend")
    if "backend" in dims:  # the backend dimension always comes first, as in a plan
        dims.remove("backend")
        dims.insert(0, "backend")
    return dims


def _fixed_value(ds: xr.Dataset, dim: str, name: str) -> Any:
    """The value ``ds`` held ``dim`` at, for an input that did not sweep it."""
    if dim == "backend" and len(ds.iotune.backends) == 1:
        return ds.iotune.backends[0]
    fixed = ds.iotune.fixed
    if dim in fixed:
        return fixed[dim]
    raise ResultsError(
        f"cannot merge: parameter {dim!r} is swept in another input but not set in {name}; "
        f"rerun {name} with {dim} fixed, or merge sweeps that agree on it"
    )


def _expand(ds: xr.Dataset, dims: list[str], name: str) -> xr.Dataset:
    """``ds`` with every dim of ``dims`` (fixed parameters become length-1 dims)."""
    missing = [d for d in dims if d not in ds.dims]
    for dim in missing:
        value = _fixed_value(ds, dim, name)
        ds = ds.drop_vars(dim, errors="ignore").expand_dims({dim: [value]})
    keep = [d for d in ds.dims if d not in dims]
    order = [*dims, *keep]
    return ds.transpose(*[d for d in order if d in ds.dims])


def _combine(datasets: list[xr.Dataset], dims: list[str]) -> xr.Dataset:
    import xarray as xr

    union: dict[str, list] = {}
    for ds in datasets:
        for dim in ds.dims:
            seen = union.setdefault(str(dim), [])
            seen += [v for v in ds[dim].values.tolist() if v not in seen]
    fill: dict[str, Any] = {v: "" for v in _STRING_VARS}
    indexes = {dim: np.asarray(values) for dim, values in union.items()}  # widest strings
    aligned = [_strings_as_objects(ds.reindex(indexes, fill_value=fill)) for ds in datasets]
    result = aligned[0]
    for other in aligned[1:]:
        # a point the result lacks, or one it has not measured and the other has
        take = (result["status"] == "") | ((result["status"] != "ok") & (other["status"] == "ok"))
        for name in result.data_vars:
            if name in other.data_vars:
                result[name] = xr.where(take, other[name], result[name], keep_attrs=True)
        for name in other.data_vars:
            if name not in result.data_vars:
                result[name] = other[name].where(take)
    empty = result["status"] == ""
    result["status"] = result["status"].where(~empty, "pending")
    result["error"] = result["error"].where(~empty, _NOT_MEASURED)
    for var in result.variables.values():
        var.encoding = {}  # an input file's string widths would truncate longer labels
    order = [*dims, *(d for d in result.dims if d not in dims)]
    return result.transpose(*order)


def _strings_as_objects(ds: xr.Dataset) -> xr.Dataset:
    for name in _STRING_VARS:
        if name in ds:
            ds[name] = ds[name].astype(object).where(ds[name].notnull(), "")
    return ds


def _merged_attrs(datasets: list[xr.Dataset], names: list[str], dims: list[str]) -> dict:
    attrs: dict[str, Any] = {}
    keys = [k for ds in datasets for k in ds.attrs]
    for key in dict.fromkeys(keys):
        values = [ds.attrs.get(key) for ds in datasets]
        texts = list(dict.fromkeys(str(v) for v in values if v is not None))
        attrs[key] = values[0] if len(texts) == 1 else " | ".join(texts)
    fixed = [ds.iotune.fixed for ds in datasets]
    common = {
        k: v for k, v in fixed[0].items() if k not in dims and all(f.get(k) == v for f in fixed)
    }
    backends = [b for ds in datasets for b in ds.iotune.backends]
    starts = [str(ds.attrs.get("started", "")) for ds in datasets]
    ends = [str(ds.attrs.get("ended", "")) for ds in datasets]
    attrs.update(
        schema_version=datasets[0].attrs.get("schema_version"),
        name="+".join(dict.fromkeys(str(ds.attrs.get("name", "?")) for ds in datasets)),
        swept=" ".join(dims),
        fixed_parameters=json.dumps(common),
        backends=" ".join(dict.fromkeys(backends)),
        workload=datasets[0].attrs.get("workload", "{}"),
        repeats=max(int(ds.attrs.get("repeats", 0)) for ds in datasets),
        started=min((s for s in starts if s), default=""),
        ended=max((e for e in ends if e), default=""),
        merged_from=json.dumps(
            [
                {"source": name, **{k: _jsonable(v) for k, v in ds.attrs.items()}}
                for ds, name in zip(datasets, names, strict=True)
            ]
        ),
    )
    return attrs


def _jsonable(value: Any) -> Any:
    return plain(value) if isinstance(value, np.generic) else value
