"""A source of several files: a glob or a list, opened as one dataset along its record dimension.

As ``xarray.open_mfdataset(combine="by_coords")`` does, the files are ordered by the
values of the dimension whose coordinate differs between them (the record dimension,
usually ``time``) and concatenated along it; variables without that dimension and the
attributes are the first file's.  The files stay undecoded, so they must agree on
what the stored values mean: the same variables, dimensions, dtypes and CF packing
(``scale_factor``, ``_FillValue``, ``units`` ...); a file that does not is refused
with a line that names it and says why.  Each file is opened lazily (dask), so a
region reads only its rows.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.convert.opening import open_any
from iotune.convert.source import FILE, Source, file_engine, is_zarr, open_source
from iotune.core.errors import UsageError

if TYPE_CHECKING:
    import xarray as xr

#: attributes whose difference changes what the stored values mean
MEANING = ("_FillValue", "missing_value", "scale_factor", "add_offset", "units", "calendar")
SourceLike = str | os.PathLike[str]


def expand(given: SourceLike | Sequence[SourceLike]) -> list[Path]:
    """The source paths: each path as given, each glob (``data/tas_*.nc``) in sorted order.

    Raises
    ------
    UsageError
        A glob that matches nothing, or no source at all.
    """
    items = [given] if isinstance(given, str | os.PathLike) else list(given)
    if not items:
        raise UsageError("apply: give at least one SOURCE")
    paths: list[Path] = []
    for item in items:
        text = os.fspath(item)
        if "://" in text:
            raise UsageError(f"source {text}: several sources must be local files")
        if Path(text).exists() or not glob.has_magic(text):
            paths.append(Path(text))
            continue
        matched = sorted(glob.glob(text))  # noqa: PTH207 (a pattern with its directory)
        if not matched:
            raise UsageError(f"source {text!r}: no file matches")
        paths.extend(Path(m) for m in matched)
    return paths


def open_sources(given: SourceLike | Sequence[SourceLike]) -> Source:
    """One :class:`Source` for one path, a list of paths or globs.

    Raises
    ------
    UsageError
        A file is missing or unreadable, or does not combine with the first one.
    """
    items = [given] if isinstance(given, str | os.PathLike) else list(given)
    if len(items) == 1 and "://" in os.fspath(items[0]):
        return open_any(items[0])  # a URL goes as it is (a Path would fold its "//")
    paths = expand(given)
    if len(paths) == 1:
        return open_source(paths[0])
    parts: list[xr.Dataset] = []
    try:
        for path in paths:
            parts.append(_open_part(path))
        return _combine(paths, parts)
    except BaseException:
        for part in parts:
            part.close()
        raise


def _open_part(path: Path) -> xr.Dataset:
    import xarray as xr

    if is_zarr(path):
        raise UsageError(f"source {path}: several sources must be netCDF/HDF5 files, not Zarr")
    single = open_source(path)  # the one-file checks and messages
    single.close()
    with _no_chunk_cache():
        return xr.open_dataset(path, engine=file_engine(), decode_cf=False, chunks={})


@contextlib.contextmanager
def _no_chunk_cache() -> Iterator[None]:
    """Files opened within get no HDF5 chunk cache (netCDF-C's default is 64 MiB per
    variable and file: 64 files held 0.9 GiB beside a 0.3 GiB limit).  A region reads
    each source chunk once, so a cache only holds chunks already copied; measured, a
    block of 192 MiB from 64 files: 0.36 GiB resident and 2.5 s, against 0.56 GiB, 4.0 s."""
    import netCDF4

    before = netCDF4.get_chunk_cache()
    netCDF4.set_chunk_cache(0, before[1], before[2])
    try:
        yield
    finally:
        netCDF4.set_chunk_cache(*before)


def _combine(paths: list[Path], parts: list[xr.Dataset]) -> Source:
    import xarray as xr

    record = _record_dim(paths, parts)
    for path, part in zip(paths[1:], parts[1:], strict=True):
        _check_agrees(path, part, paths[0], parts[0], record)
    for path, part in zip(paths, parts, strict=True):
        values = part[record].values
        if len(values) > 1 and not (values[1:] > values[:-1]).all():
            raise UsageError(f"source {path}: its {record} values do not increase")
    order = sorted(range(len(parts)), key=lambda i: _first_last(parts[i], record)[0])
    for before, after in itertools.pairwise(order):
        low, high = _first_last(parts[before], record), _first_last(parts[after], record)
        if high[0] <= low[1]:
            raise UsageError(
                f"source {paths[after]}: {record} {high[0]:g}..{high[1]:g} overlaps "
                f"{paths[before]}'s {low[0]:g}..{low[1]:g}"
            )
    combined = xr.concat(
        [parts[i] for i in order],
        dim=record,
        data_vars="minimal",
        coords="minimal",
        compat="override",
        join="override",
        combine_attrs="override",
    )
    # attributes and encodings are those of the first file given, as open_mfdataset keeps them
    combined.attrs = dict(parts[0].attrs)

    def close_all() -> None:
        for part in parts:
            part.close()

    combined.set_close(close_all)
    unlimited = tuple(parts[0].encoding.get("unlimited_dims") or ())
    return Source(paths[0], FILE, combined, unlimited, paths=tuple(paths))


def _record_dim(paths: list[Path], parts: list[xr.Dataset]) -> str:
    """The dimension whose coordinate values differ between the first two files."""
    first, second = parts[0], parts[1]
    differ = [
        str(dim)
        for dim in first.dims
        if dim in first.coords and dim in second.coords and not first[dim].equals(second[dim])
    ]
    unlimited = [str(d) for d in first.encoding.get("unlimited_dims") or () if d in differ]
    if len(unlimited) == 1:
        return unlimited[0]  # other dimensions that differ are refused by _check_agrees
    if len(differ) != 1:
        why = (
            "no dimension whose coordinate values differ"
            if not differ
            else f"coordinates differ along {', '.join(differ)}"
        )
        raise UsageError(
            f"source {paths[1]}: does not combine with {paths[0]} along one record "
            f"dimension ({why})"
        )
    return differ[0]


def _check_agrees(
    path: Path, part: xr.Dataset, first_path: Path, first: xr.Dataset, record: str
) -> None:
    mine, theirs = sorted(map(str, part.variables)), sorted(map(str, first.variables))
    if mine != theirs:
        raise UsageError(
            f"source {path}: variables ({', '.join(mine)}) differ from {first_path}'s "
            f"({', '.join(theirs)})"
        )
    for name, var in part.variables.items():
        other = first[name]
        if var.dims != other.dims or var.dtype != other.dtype:
            raise UsageError(
                f"source {path}: {name} is {var.dtype}({', '.join(map(str, var.dims))}), "
                f"{other.dtype}({', '.join(map(str, other.dims))}) in {first_path}"
            )
        for key in MEANING:
            if not _same(var.attrs.get(key), other.attrs.get(key)):
                raise UsageError(
                    f"source {path}: {name} {key} {_show(var.attrs.get(key))} differs from "
                    f"{first_path}'s {_show(other.attrs.get(key))} (the stored values would "
                    "mean other things)"
                )
    for dim, length in part.sizes.items():
        if dim == record:
            continue
        if length != first.sizes[dim]:
            raise UsageError(
                f"source {path}: {dim} has {length} values, {first.sizes[dim]} in {first_path}"
            )
        if dim in first.coords and not part[dim].equals(first[dim]):
            raise UsageError(f"source {path}: the {dim} coordinate differs from {first_path}'s")


def _first_last(part: xr.Dataset, record: str) -> tuple[float, float]:
    values = part[record].values
    return (float(values[0]), float(values[-1])) if len(values) else (float("inf"),) * 2


def _same(a: Any, b: Any) -> bool:
    import numpy as np

    if a is None or b is None:
        return a is b
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))


def _show(value: Any) -> str:
    import numpy as np

    return repr(value if value is None or isinstance(value, str) else np.asarray(value).tolist())
