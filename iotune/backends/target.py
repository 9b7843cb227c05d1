"""What ``iotune apply`` asks of a format's target writer, in no format's words.

A conversion (:mod:`iotune.convert`) describes the file or store to create as a
:class:`TargetPlan`: the dimensions, the variables (names, dimensions, shape, dtype,
attributes, their storage) and the settings of the format's knobs; the format's
:class:`TargetWriter` (``Backend.apply_target()``) writes it.  Each writer declares which of
its format's knobs the file or store carries (:attr:`TargetWriter.carried`), which
only a reader can set (:attr:`TargetWriter.reader_side`: chunk caches, request
concurrency, dask), and reads the carried ones back from an existing file
(:meth:`TargetWriter.read_back`), so what was measured is what lands.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from iotune.model.codecs import Codec
from iotune.model.quantize import Quantize


@dataclass(frozen=True)
class TargetVariable:
    """One variable of the target: its shape, dtype, attributes and storage.

    ``converted`` variables get the plan's codec and quantisation with ``chunks``
    (a tuple, ``auto`` or ``contiguous``) and ``shards``; the others keep their own
    storage: ``chunks`` (a tuple, or ``contiguous``) and ``encoding`` (netCDF's
    ``createVariable`` keywords: ``compression``, ``complevel``, ``shuffle``,
    ``fletcher32``).
    """

    name: str
    dims: tuple[str, ...]
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    #: the attributes as stored, ``_FillValue`` included
    attrs: Mapping[str, Any]
    converted: bool
    chunks: tuple[int, ...] | str
    shards: tuple[int, ...] | None = None
    encoding: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TargetPlan:
    """The file or store to create: dimensions, variables, global attributes, settings."""

    sizes: Mapping[str, int]
    #: dimensions that stay unlimited (netCDF's record dimensions)
    unlimited: tuple[str, ...]
    variables: tuple[TargetVariable, ...]
    attrs: Mapping[str, Any]
    codec: Codec
    quantize: Quantize
    #: every other knob of the format the target is written with, by its registered name
    settings: Mapping[str, Any]

    def variable(self, name: str) -> TargetVariable:
        """The variable ``name``."""
        for var in self.variables:
            if var.name == name:
                return var
        raise KeyError(name)

    @property
    def converted(self) -> list[str]:
        """The names of the variables written with the plan's codec and chunks."""
        return [v.name for v in self.variables if v.converted]


class TargetWriter(ABC):
    """A format's apply target, created or reopened, written by blocks.

    Subclasses live in their format's package (``backends/<format>/target.py``).
    """

    #: the format's knobs a file or store keeps (or its library applies while writing)
    carried: ClassVar[tuple[str, ...]]
    #: the format's knobs only a reader sets (caches, concurrency, dask): the report names
    #: them with the line that sets them when reading
    reader_side: ClassVar[tuple[str, ...]] = ()
    #: the carried knobs the library applies while writing that the file does not keep:
    #: :meth:`applied` reports them, not :meth:`read_back`
    while_writing: ClassVar[tuple[str, ...]] = ()
    #: the suffixes of a target path that choose this format (``--settings`` without backend=)
    suffixes: ClassVar[tuple[str, ...]] = ()
    #: the format of a target whose suffix chooses none
    default_target: ClassVar[bool] = False
    #: a cluster's workers may write regions at once (disjoint chunks or shards)
    parallel_regions: ClassVar[bool] = False
    #: written as many objects (a chunk or shard each), so it may live on an object store;
    #: else one seekable file
    object_store: ClassVar[bool] = False
    #: xarray's engine for this format
    engine: ClassVar[str]
    #: one HDF5 file whose chunks h5py may write as stored bytes (:meth:`chunk_file`)
    hdf5_chunks: ClassVar[bool] = False
    #: the target in words, after "a"/"an" (``a netCDF4``), for apply's engine line
    file_kind: ClassVar[str] = "a"
    #: why the region copier writes this format (docs/benchmarks.md), for apply's engine line
    measured: ClassVar[str] = "the region copier: one writer, regions one after the other"

    @classmethod  # noqa: B027 - most formats check nothing more
    def check(
        cls, settings: Mapping[str, Any], chunks: tuple[int, ...] | str, codec: Codec
    ) -> None:
        """Refuse settings the format cannot write together (``NotApplicable``)."""

    @classmethod  # noqa: B027 - most formats check nothing more
    def check_variable(cls, q: Quantize, dtype: np.dtype[Any], attrs: Mapping[str, Any]) -> None:
        """Refuse a quantisation of a variable of ``dtype`` and ``attrs`` (``NotApplicable``)."""

    @classmethod
    @abstractmethod
    def create(cls, path: Path, plan: TargetPlan, ds: Any) -> TargetWriter:
        """Create the target: dimensions, variables, attributes; no values of ``by_region``.

        ``ds`` is the source as an undecoded ``xarray.Dataset`` (a store's writer
        takes its metadata from it).
        """

    @classmethod
    @abstractmethod
    def reopen(cls, path: Path, plan: TargetPlan, ds: Any) -> TargetWriter:
        """Reopen a partial target to finish it."""

    @abstractmethod
    def write(self, name: str, start: int, stop: int, values: np.ndarray) -> None:
        """Rows ``start`` to ``stop`` of variable ``name`` (a scalar: all of it)."""

    @abstractmethod
    def write_block(self, name: str, index: tuple[slice, ...], values: np.ndarray) -> None:
        """Write ``values`` at ``index`` (one slice per dimension) of variable ``name``."""

    @abstractmethod
    def read_block(self, name: str, index: tuple[slice, ...]) -> np.ndarray:
        """The stored values at ``index`` of variable ``name``."""

    @abstractmethod
    def read(self, name: str, start: int | None = None, stop: int | None = None) -> np.ndarray:
        """Rows ``start`` to ``stop`` of variable ``name`` (all of it without them)."""

    def sync(self) -> None:  # noqa: B027 - a store is durable chunk by chunk
        """Make what was written durable before the journal says so."""

    @abstractmethod
    def close(self) -> None:
        """Close the target."""

    @abstractmethod
    def storage(self, name: str) -> tuple[Any, Any]:
        """A variable's chunks and filter names as the file reports them."""

    @contextlib.contextmanager
    def chunk_file(self) -> Iterator[Any]:
        """The target as an ``h5py.File`` open for ``write_direct_chunk`` (:attr:`hdf5_chunks`).

        The writer's own handle is closed meanwhile where it is another library's (two
        HDF5 libraries must not hold one file open for writing) and reopened after.
        """
        raise NotImplementedError(f"{type(self).__name__} writes no HDF5 chunks directly")
        yield  # pragma: no cover - a generator for contextmanager

    def set_write_cache(self, name: str, size: int) -> None:  # noqa: B027
        """A chunk cache of ``size`` bytes for writing variable ``name`` (where one exists)."""

    def applied(self) -> dict[str, Any] | None:
        """The :attr:`while_writing` knobs as the library applied them; None: there are none."""
        return None

    @classmethod
    @abstractmethod
    def read_back(cls, path: Path, variable: str) -> dict[str, Any]:
        """The carried knobs an existing target holds for ``variable``, in iotune's names."""

    @classmethod
    def reader_lines(cls, settings: Mapping[str, Any]) -> list[str]:
        """The lines that set the :attr:`reader_side` knobs of ``settings`` when reading.

        The base gives xarray's open with the format's reading keywords
        (:meth:`xarray_keywords`) and dask's threads; a format adds its library's own
        lines (caches, concurrency) before them.
        """
        lines = []
        keywords = cls.xarray_keywords(settings)
        if keywords:
            shown = ", ".join(f"{k}={v!r}" for k, v in keywords.items())
            lines.append(f"ds = xr.open_dataset(path, engine={cls.engine!r}, {shown})")
        if settings.get("dask_threads") is not None:
            threads = int(settings["dask_threads"])
            lines.append(f"dask.config.set(scheduler='threads', num_workers={threads})")
        return lines

    @classmethod
    def xarray_keywords(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        """``xr.open_dataset`` keywords for the reader-side knobs: dask's chunks here."""
        chunks = settings.get("dask_chunks")
        if chunks in (None, "none"):
            return {}
        value: Any = {"auto": "auto", "storage": {}}.get(str(chunks))
        if value is None:  # dim=n,dim=n
            pairs = (item.partition("=") for item in str(chunks).split(","))
            value = {dim: int(n) for dim, _, n in pairs}
        return {"chunks": value}


def reader_settings(writer: type[TargetWriter], settings: Mapping[str, Any]) -> dict[str, Any]:
    """The reader-side knobs ``settings`` sets (not None), in the writer's order."""
    return {k: settings[k] for k in writer.reader_side if settings.get(k) is not None}
