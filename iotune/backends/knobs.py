"""Each built-in backend's knobs, declared once with the library's defaults.

A backend's knobs are a frozen dataclass: its fields, in order, are the
backend's ``parameters``; a field's default is what the library does when a
spec leaves the knob out (``None``: the library's own choice, which iotune does
not name), and ``resolve``, ``verify`` and the exports read the defaults from
it.  Adding a knob is its entry in :mod:`iotune.model.parameters`, its field
here, the backend code that applies it, reads it back and exports it, and its test.
A backend built on another one's library (the object-store backends,
:mod:`iotune.backends.object_knobs`) takes that library's knobs through
:func:`combined` rather than naming them again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import MISSING, dataclass, field, fields, make_dataclass
from typing import Any, Self, cast

from iotune.model import parameters


@dataclass(frozen=True)
class Knobs:
    """Base of a backend's knobs: every field must be a registered parameter."""

    def __post_init__(self) -> None:
        for name in self.names():
            parameters.get(name)  # UsageError: the knob is not in the registry

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The knobs in declaration order: the backend's ``parameters``."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def default(cls, name: str) -> Any:
        """The library's default of knob ``name`` (``None``: the library's own choice)."""
        for f in fields(cls):
            if f.name == name:
                return None if f.default is MISSING else f.default
        raise KeyError(f"{cls.__name__} has no knob {name!r}; knobs: {', '.join(cls.names())}")

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every knob's library default, in declaration order."""
        return {f.name: cls.default(f.name) for f in fields(cls)}

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> Self:
        """The knobs of ``settings``: its values where set (not ``None``), defaults elsewhere."""
        return cls(**{n: settings[n] for n in cls.names() if settings.get(n) is not None})


#: the knobs of a read through xarray (``SlabBackend.open_dataset``): the last of each
#: format xarray opens; None: not given, the trial reads through the format's library
XARRAY_KNOBS = ("dask_chunks", "dask_threads")


@dataclass(frozen=True)
class LayoutKnobs(Knobs):
    """Chunks and codec: what every chunked format applies."""

    chunks: str = "auto"
    codec: str = "none"
    level: int | None = None
    shuffle: str | None = None


@dataclass(frozen=True)
class MemoryKnobs(LayoutKnobs):
    """The memory backend's knobs: a layout compressed by numcodecs, with no file."""


@dataclass(frozen=True)
class NetCDF4Knobs(LayoutKnobs):
    """netCDF4-python's knobs (netCDF-C over HDF5)."""

    chunk_cache: int | None = None
    nprocs: int = 1
    fill: str = "on"
    format: str = "NETCDF4"
    quantize: str = "off"
    alignment: int | None = None
    #: netCDF-C and HDF5 align every block of at least this many bytes
    alignment_threshold: int = 1
    cache_slots: int | None = None
    cache_preemption: float | None = None
    dask_chunks: str | None = None
    dask_threads: int | None = None


@dataclass(frozen=True)
class H5pyKnobs(LayoutKnobs):
    """h5py's knobs: the layout, parallel HDF5 and its hints, file and cache properties."""

    chunk_cache: int | None = None
    nprocs: int = 1
    io: str = "collective"
    hints: str | None = None
    stripe_count: int | None = None
    stripe_size: int | None = None
    cb_nodes: int | None = None
    cb_buffer_size: int | None = None
    stripe_count_hint: int | None = None
    stripe_size_hint: int | None = None
    alignment: int | None = None
    alignment_threshold: int = 1
    meta_block_size: int | None = None
    sieve_buf_size: int | None = None
    libver: str | None = None
    page_size: int | None = None
    page_buffer: int | None = None
    fill_time: str | None = None
    alloc_time: str | None = None
    cache_slots: int | None = None
    #: HDF5's chunk cache preemption (w0) when a cache is set
    cache_preemption: float = 0.75
    dask_chunks: str | None = None
    dask_threads: int | None = None


@dataclass(frozen=True)
class ZarrKnobs(Knobs):
    """zarr-python 3's knobs: inner chunks, shards, codec, config."""

    chunks: str = "auto"
    shards: str = "none"
    codec: str = "none"
    level: int | None = None
    shuffle: str | None = None
    #: accepted for multi-format sweeps; zarr has no chunk cache
    chunk_cache: int | None = None
    request_concurrency: int | None = None
    #: iotune stores every chunk so sizes compare with the other formats (zarr: off)
    write_empty_chunks: str = "on"
    shard_index: str | None = None
    quantize: str = "off"
    dask_chunks: str | None = None
    dask_threads: int | None = None


@dataclass(frozen=True)
class PosixKnobs(Knobs):
    """The POSIX backend's knobs (IOR's and fio's)."""

    transfer_size: int = 2**20
    preallocate: str = "off"
    direct: str = "off"
    fadvise: str = "none"
    sync: str = "fsync"


@dataclass(frozen=True)
class MpiioKnobs(Knobs):
    """The MPI-IO backend's knobs: IOR's and benchio's, Lustre striping, MPI-IO hints."""

    nprocs: int = 1
    transfer_size: int = 2**20
    #: None: the ranks move all the workload's bytes between them
    bytes_per_rank: int | None = None
    layout: str = "shared"
    io: str = "collective"
    access: str = "contiguous"
    hints: str | None = None
    stripe_count: int | None = None
    stripe_size: int | None = None
    cb_nodes: int | None = None
    cb_buffer_size: int | None = None
    stripe_count_hint: int | None = None
    stripe_size_hint: int | None = None


def combined(
    name: str,
    first: type[Knobs],
    then: type[Knobs],
    *,
    without: Collection[str] = (),
    module: str,
    doc: str,
) -> type[Knobs]:
    """Knobs whose fields are ``first``'s, but ``without``, then ``then``'s.

    For a backend built on another backend's library: its knobs are the ones of
    that library that apply, with their defaults, followed by its own; where a
    name is in both, it moves to ``then``'s place with ``then``'s default.

    Parameters
    ----------
    name
        The class's name, bound to it in ``module``.
    first
        The library's knobs.
    then
        The backend's own knobs.
    without
        ``first``'s knobs that do not apply.
    module
        The module that binds the class (``__name__``), so it is found by name.
    doc
        The class's docstring.
    """
    own = {*without, *then.names()}
    kept = [f for f in fields(first) if f.name not in own] + list(fields(then))
    specs = [(f.name, f.type, field(default=f.default)) for f in kept]
    namespace = {"__doc__": doc, "__module__": module}
    made = make_dataclass(name, specs, bases=(Knobs,), frozen=True, namespace=namespace)
    return cast("type[Knobs]", made)
