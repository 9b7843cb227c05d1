"""Parameters renamed so one name means one thing, and the old spellings that keep working.

A spec written for an earlier release still parses: an old name under
``parameters``, ``baseline`` or ``search.focus`` is read as the new one with a
one-line :class:`~iotune.core.errors.DeprecatedOptionWarning`.  A results file
written before keeps opening: its coordinates and the keys of its ``effective``
records take the new names (:func:`rename_results`), silently, since the file is
not the user's to edit.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from iotune.core.errors import DeprecatedOptionWarning, SpecError

if TYPE_CHECKING:
    import xarray as xr

#: old name -> new name, and why the old one went
RENAMED: dict[str, tuple[str, str]] = {
    # zarr's async.concurrency is the requests in flight on a local store and an object store alike
    "async_concurrency": ("request_concurrency", "one name for zarr's async.concurrency"),
    # not fsspec's read_block_size: the bytes each MPI rank moves (IOR's -b)
    "block_size": ("bytes_per_rank", "block_size also read as fsspec's read_block_size"),
    # the ROMIO hints that set Lustre striping, beside lfs's stripe_count and stripe_size
    "striping_factor": ("stripe_count_hint", "the stripe count, set through an MPI-IO hint"),
    "striping_unit": ("stripe_size_hint", "the stripe size, set through an MPI-IO hint"),
    # the batches loader's knobs as torch's DataLoader names them (workers: dask's workers too)
    "workers": ("num_workers", "DataLoader's num_workers; --workers is dask's"),
    "prefetch": ("prefetch_factor", "DataLoader's prefetch_factor"),
}
FIRST_NAMES = {new: old for old, (new, _why) in RENAMED.items()}
#: the release that drops the old spellings
REMOVED_IN = "0.3"


def current(name: str) -> str:
    """The name a parameter has now (``name`` itself when it was never renamed)."""
    return RENAMED[name][0] if name in RENAMED else name


def first_name(name: str) -> str:
    """The name a parameter had before it was renamed (``name`` itself if it never was)."""
    return FIRST_NAMES.get(name, name)


def warn_renamed(old: str, *, places: list[str]) -> None:
    """The one-line warning for an old name found in the spec's ``places`` (``parameters``...)."""
    new, why = RENAMED[old]
    where = ", ".join(places)
    message = (
        f"{old} is deprecated, use {new} ({why}; in {where}; the old name goes in {REMOVED_IN})"
    )
    warnings.warn(message, DeprecatedOptionWarning, stacklevel=4)


def rename_keys(section: Any, *, where: str) -> tuple[Any, list[str]]:
    """``section`` (a spec mapping) with old parameter names replaced, and the old names found.

    Anything that is not a mapping is returned as it is, for the section's own
    parser to reject with its message.

    Raises
    ------
    SpecError
        Both the old and the new spelling are given.
    """
    if not isinstance(section, Mapping) or not any(key in RENAMED for key in section):
        return section, []
    out: dict[Any, Any] = {}
    found = []
    for key, value in section.items():
        if key in RENAMED:
            new = current(key)
            if new in section:
                raise SpecError(f"{where}.{key}", f"given with its new name {new}; keep only {new}")
            found.append(key)
            key = new
        out[key] = value
    return out, found


def rename_list(names: Any) -> tuple[Any, list[str]]:
    """A list of parameter names (``search.focus``) with the old ones replaced, and those found."""
    if not isinstance(names, list):
        return names, []
    found = [n for n in names if isinstance(n, str) and n in RENAMED]
    return [current(n) if isinstance(n, str) else n for n in names], found


def with_current_names(data: Mapping[str, Any]) -> dict[str, Any]:
    """A spec's ``data`` with renamed parameters under their new names, one warning per old name.

    Old names are read under ``parameters``, ``baseline`` and ``search.focus``.
    """
    data = dict(data)
    places: dict[str, list[str]] = {}
    for key in ("parameters", "baseline"):
        if key in data:
            data[key], found = rename_keys(data[key], where=key)
            for old in found:
                places.setdefault(old, []).append(key)
    search = data.get("search")
    if isinstance(search, dict) and "focus" in search:
        focus, found = rename_list(search["focus"])
        data["search"] = {**search, "focus": focus}
        for old in found:
            places.setdefault(old, []).append("search.focus")
    for old, where in places.items():
        warn_renamed(old, places=where)
    return data


def rename_results(ds: xr.Dataset) -> xr.Dataset:
    """A results Dataset of an earlier release with today's parameter names."""
    old = [name for name in RENAMED if name in ds.variables]
    if old:
        ds = ds.rename({name: current(name) for name in old})
    for variable in RECORDS:
        if variable in ds:
            values = ds[variable].values.astype(object)  # a longer name must not be cut
            values.flat[:] = [_renamed_record(text) for text in values.flat]
            ds[variable] = ds[variable].copy(data=values)
    if isinstance(ds.attrs.get("swept"), str):
        ds.attrs["swept"] = " ".join(current(name) for name in ds.attrs["swept"].split())
    for attr in ATTRS:
        if attr in ds.attrs:
            ds.attrs[attr] = _renamed_record(ds.attrs[attr])
    return ds


#: the per-trial JSON records of a results file whose keys are parameter names
RECORDS = ("effective", "file_properties")
#: the results file's attributes that are JSON records keyed by parameter names
ATTRS = ("fixed_parameters", "baseline")


def _renamed_record(text: Any) -> Any:
    """A JSON record with today's parameter names (anything else as it is)."""
    if not isinstance(text, str) or not any(f'"{name}"' in text for name in RENAMED):
        return text
    record = json.loads(text)
    if not isinstance(record, dict):
        return text
    return json.dumps({current(k): v for k, v in record.items()})
