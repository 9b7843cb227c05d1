"""What a source holds: its variables, their dimensions, encodings, and which to convert.

The source is opened with xarray without CF decoding, so every value read is the
stored one (packed integers, fill values) and every attribute is carried as written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.backends import opener_of
from iotune.core.errors import UsageError

if TYPE_CHECKING:
    import xarray as xr


#: a source's kinds: one netCDF/HDF5 file, or a Zarr store
FILE, STORE = "file", "store"


def file_engine() -> str:
    """xarray's engine for a netCDF/HDF5 source: the file format's (its writer's)."""
    from iotune.convert.layout import source_format, writer_of

    return writer_of(source_format(store=False)).engine


@dataclass
class Source:
    """An opened source: the raw Dataset, its format and its unlimited dimensions."""

    path: Path
    kind: str  # FILE (a netCDF/HDF5 file) or STORE (a Zarr store)
    ds: xr.Dataset
    unlimited: tuple[str, ...] = field(default_factory=tuple)
    #: every file of a source of several (see :mod:`iotune.convert.sources`); else empty
    paths: tuple[Path, ...] = ()
    #: the source's URL when it is on an object store (:mod:`iotune.convert.stores`)
    url: str = ""

    def close(self) -> None:
        self.ds.close()

    def location(self) -> str:
        """Where the source is, absolute: its URL, or its resolved local path."""
        return self.url or str(self.path.resolve())

    def nbytes(self) -> int:
        """Bytes the source takes on disk (a Zarr store: all its files)."""
        return sum(disk_bytes(p) for p in self.paths or (self.path,))

    def label(self) -> str:
        """The source as a report names it: its URL, its path, or its files' paths."""
        if self.url:
            return self.url
        return ", ".join(map(str, self.paths)) if self.paths else str(self.path)


def disk_bytes(path: Path) -> int:
    """The bytes of a file, or of every file under a directory."""
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def is_zarr(path: Path) -> bool:
    """Whether ``path`` is a Zarr store (v2 or v3) on the local file system."""
    markers = ("zarr.json", ".zgroup", ".zattrs")
    return path.is_dir() and any((path / m).exists() for m in markers)


def open_source(path: str | os.PathLike[str]) -> Source:
    """Open a netCDF/HDF5 file or a Zarr store without decoding.

    Raises
    ------
    UsageError
        The source is missing or neither format can read it.
    """
    import xarray as xr

    where = Path(path)
    if not where.exists():
        raise UsageError(f"source {where}: no such file or directory")
    opener = opener_of(where)
    try:
        if opener is not None:  # a store its format opens (an Icechunk repository)
            return Source(where, STORE, opener.open_source(where))  # type: ignore[attr-defined]
        if is_zarr(where):
            ds = xr.open_zarr(where, decode_cf=False, chunks=None, consolidated=False)
            return Source(where, STORE, ds)
        ds = xr.open_dataset(where, engine=file_engine(), decode_cf=False)
    except Exception as err:  # each library says "unreadable" its own way
        why = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UsageError(
            f"source {where}: not a readable netCDF, HDF5 or Zarr source ({why})"
        ) from err
    unlimited = tuple(ds.encoding.get("unlimited_dims") or ())
    return Source(where, FILE, ds, unlimited)


def select_variables(
    ds: xr.Dataset, *, dims: Sequence[str], names: Sequence[str] | None, ndim: int | None
) -> list[str]:
    """The variables to convert.

    Default: the data variables with exactly the workload's dimensions ``dims``; with no
    workload (``--settings``), those of ``ndim`` dimensions.  ``names`` are checked instead.

    Raises
    ------
    UsageError
        A named variable is missing or of other dimensions, or no variable matches.
    """
    if names:
        for name in names:
            if name not in ds.variables:
                found = ", ".join(map(str, ds.data_vars)) or "none"
                raise UsageError(f"--variables: {name!r} is not in the source (found: {found})")
            have = ds[name].dims
            if (dims and len(have) != len(dims)) or (ndim and len(have) != ndim):
                want = ", ".join(dims) if dims else f"{ndim} dimensions"
                raise UsageError(
                    f"--variables: {name!r} has dimensions ({', '.join(map(str, have))}), "
                    f"the configuration is for ({want})"
                )
        return list(names)
    if dims:
        chosen = [str(n) for n, v in ds.data_vars.items() if tuple(v.dims) == tuple(dims)]
    else:
        chosen = [str(n) for n, v in ds.data_vars.items() if v.ndim == ndim]
    if not chosen:
        shown = "; ".join(f"{n}({', '.join(map(str, v.dims))})" for n, v in ds.data_vars.items())
        want = f"the workload's dimensions ({', '.join(dims)})" if dims else f"{ndim} dimensions"
        raise UsageError(
            f"no variable of the source has {want}; found: {shown or 'no data variables'} "
            "(name them with --variables)"
        )
    return chosen


def source_chunks(var: xr.Variable) -> tuple[int, ...] | str:
    """A source variable's own chunks (``contiguous`` when stored unchunked)."""
    enc = var.encoding
    if enc.get("contiguous"):
        return "contiguous"
    found = enc.get("chunksizes") or enc.get("chunks") or enc.get("preferred_chunks")
    if isinstance(found, dict):
        found = tuple(found.get(d, n) for d, n in zip(var.dims, var.shape, strict=True))
    return tuple(int(c) for c in found) if found else "contiguous"


def own_encoding(var: xr.Variable) -> dict[str, Any]:
    """A netCDF source variable's own storage keywords for ``createVariable``."""
    enc = var.encoding
    chunks = source_chunks(var)
    out: dict[str, Any] = {}
    if isinstance(chunks, str):
        out["contiguous"] = True
    else:  # a Zarr source's chunks may pass the array's end; netCDF's may not
        out["chunksizes"] = tuple(
            max(1, min(c, n or c)) for c, n in zip(chunks, var.shape, strict=True)
        )
    for name in ("zstd", "bzip2", "zlib"):
        if enc.get(name):
            out["compression"] = name
            out["complevel"] = enc.get("complevel", 4)
    out["shuffle"] = bool(enc.get("shuffle", False))
    out["fletcher32"] = bool(enc.get("fletcher32", False))
    return out
