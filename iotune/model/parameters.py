"""The parameter registry: every sweep parameter declared once.

A :class:`ParameterDef` says how a parameter parses from a spec, how it prints,
its units and label in results and plots, and which group of knobs it belongs
to.  The spec parser, the Dataset writer, ``ds.iotune``, plots, baselines,
recommend and the exports read it; a backend names the registered parameters
it applies in its ``parameters``.  Adding a knob is one entry here, the backend
that applies it, and its test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from iotune import codecs
from iotune.errors import UsageError
from iotune.model.checks import byte_size, choice, fail, integer, mapping, positive_size
from iotune.units import chunk_label, format_size

if TYPE_CHECKING:
    from iotune.model.spec import Workload

Kind = Literal["size", "count", "enum", "shape", "name", "fraction"]
Group = Literal["format", "cache", "parallel", "file system", "MPI"]
Parser = Callable[[object, str, "Workload"], Any]
KINDS: tuple[str, ...] = ("size", "count", "enum", "shape", "name", "fraction")
GROUPS: tuple[str, ...] = ("format", "cache", "parallel", "file system", "MPI")


@dataclass(frozen=True)
class ParameterDef:
    """One sweep parameter: how it parses, prints and is labelled.

    Parameters
    ----------
    name
        The key under ``parameters:`` in a spec and the coordinate in results.
    kind
        ``size`` (bytes), ``count`` (an integer), ``enum`` (one of ``choices``),
        ``shape`` (per-dimension sizes, stored as a label like ``8x128x128``) or
        ``name`` (a free name, e.g. a hint set) or ``fraction`` (a number from 0 to 1).
    group
        Which knobs it belongs to, for listings: format, cache, parallel, file system, MPI.
    long_name
        The label of its coordinate and axes.
    parse
        ``parse(value, path, workload)``: the value from the spec, validated.
    example
        A value as a spec writes it, for documentation and the registry's tests.
    generic
        Applied by the trial runner for any backend (not by a format).
    """

    name: str
    kind: Kind
    group: Group
    long_name: str
    parse: Parser
    example: object
    generic: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r}; allowed: {', '.join(KINDS)}")
        if self.group not in GROUPS:
            raise ValueError(f"{self.name}: group {self.group!r}; allowed: {', '.join(GROUPS)}")

    @property
    def is_bytes(self) -> bool:
        """Whether values are byte counts (shown as ``64MiB``)."""
        return self.kind == "size"

    @property
    def units(self) -> str | None:
        """CF ``units`` of the coordinate: ``bytes``, ``1`` for counts, none for labels."""
        return {"size": "bytes", "count": "1", "fraction": "1"}.get(self.kind)

    def show(self, value: Any) -> str:
        """A value as a person writes it in a spec: ``64MiB``, ``8x128x128``, ``zlib``."""
        if self.is_bytes and isinstance(value, int | float) and not isinstance(value, bool):
            # exact, as a spec may say it: 64MiB, but 4000 (never a rounded 3.9KiB)
            return format_size(int(value)) if int(value) % 1024 == 0 else str(int(value))
        if self.kind == "shape" and isinstance(value, tuple):
            return chunk_label(value)
        return str(value)

    def label(self, value: Any) -> Any:
        """The value as results store it (shapes as labels, the rest unchanged)."""
        return chunk_label(value) if self.kind == "shape" else value

    def attrs(self) -> dict[str, str]:
        """The coordinate attributes of this parameter in a results Dataset."""
        units = self.units
        return {"long_name": self.long_name} | ({"units": units} if units else {})


def get(name: str) -> ParameterDef:
    """The registered parameter ``name``.

    Raises
    ------
    UsageError
        ``name`` is not registered; the message lists the registered names.
    """
    try:
        return PARAMETERS[name]
    except KeyError:
        raise UsageError(
            f"unknown parameter {name!r}; registered: {', '.join(PARAMETERS)}"
        ) from None


def is_bytes(name: str) -> bool:
    """Whether ``name`` is a registered byte-size parameter (``False`` for other names)."""
    found = PARAMETERS.get(name)
    return found is not None and found.is_bytes


def show(name: str, value: Any) -> str:
    """``value`` of parameter ``name`` as a spec writes it; plain text for other names."""
    found = PARAMETERS.get(name)
    return found.show(value) if found is not None else str(value)


def generic() -> tuple[str, ...]:
    """Parameters the trial runner applies whatever the backend (``concurrency``)."""
    return tuple(name for name, p in PARAMETERS.items() if p.generic)


# --- parsers ---------------------------------------------------------------------


def _parse_chunks(value: object, path: str, workload: Workload) -> str | tuple[int, ...]:
    if value in ("contiguous", "auto"):
        return str(value)
    if isinstance(value, Mapping):
        mapping(value, path, workload.dims)
        value = [value.get(d, size) for d, size in zip(workload.dims, workload.shape, strict=True)]
    if not isinstance(value, list | tuple):
        raise fail(
            path, f"expected 'contiguous', 'auto' or a shape like [8, 128, 128], got {value!r}"
        )
    if len(value) != len(workload.shape):
        raise fail(
            path,
            f"{list(value)} has rank {len(value)} but the workload "
            f"{dict(zip(workload.dims, workload.shape, strict=True))} has rank "
            f"{len(workload.shape)}",
        )
    chunks = tuple(integer(c, f"{path}[{i}]", minimum=1) for i, c in enumerate(value))
    for dim, c, size in zip(workload.dims, chunks, workload.shape, strict=True):
        if c > size:
            raise fail(
                path, f"chunk {list(chunks)} is larger than the data along {dim!r} ({c} > {size})"
            )
    return chunks


def _parse_shards(value: object, path: str, workload: Workload) -> str | tuple[int, ...]:
    if value == "none":
        return "none"
    shards = _parse_chunks(value, path, workload)
    if isinstance(shards, str):
        raise fail(path, f"expected 'none' or a shard shape like [64, 256, 256], got {value!r}")
    return shards


def _wrap(parser: Callable[[object], Any]) -> Parser:
    def parse(value: object, path: str, workload: Workload) -> Any:
        try:
            return parser(value)
        except ValueError as err:
            raise fail(path, str(err)) from err

    return parse


def _count(minimum: int, maximum: int) -> Parser:
    return lambda v, p, w: integer(v, p, minimum=minimum, maximum=maximum)


def _one_of(*choices: str) -> Parser:
    return lambda v, p, w: choice(v, p, choices)


def _parse_switch(value: object, path: str, workload: Workload) -> str:
    # YAML reads on/off/true/false as booleans; results store the words
    if isinstance(value, bool):
        return "on" if value else "off"
    return choice(value, path, ("off", "on"))


def _parse_fraction(value: object, path: str, workload: Workload) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = float("nan")
    if isinstance(value, bool) or not 0 <= number <= 1:
        raise fail(path, f"expected a number from 0 to 1, got {value!r}")
    return number


def _parse_quantize(value: object, path: str, workload: Workload) -> str:
    from iotune import quantize

    try:
        return quantize.parse(value, dtype=workload.dtype).label
    except ValueError as err:
        raise fail(path, str(err)) from err


def _parse_hint_set_name(value: object, path: str, workload: Workload) -> str:
    # the names are checked against the top-level ``hints`` section by the spec parser
    if not isinstance(value, str) or not value:
        raise fail(path, f"expected the name of a hint set from the 'hints' section, got {value!r}")
    return value


def _parse_stripe_size(value: object, path: str, workload: Workload) -> int:
    size = positive_size(value, path)
    if size % 65536:  # what lfs setstripe -S demands
        raise fail(path, f"{value!r} is not a multiple of 64KiB, which Lustre requires")
    return size


def _positive(value: object, path: str, workload: Workload) -> int:
    return positive_size(value, path)


def _off_or_size(value: object, path: str, workload: Workload) -> int:
    # 0 leaves the property at the library's default, so a sweep can compare with it
    return byte_size(value, path)


def _page(value: object, path: str, workload: Workload) -> int:
    size = byte_size(value, path)
    if 0 < size < 512:  # H5Pset_file_space_page_size's minimum
        raise fail(path, f"{value!r} is smaller than 512 bytes, HDF5's smallest page")
    return size


def _declare(*defs: ParameterDef) -> dict[str, ParameterDef]:
    return {d.name: d for d in defs}


PARAMETERS: dict[str, ParameterDef] = _declare(
    ParameterDef("chunks", "shape", "format", "chunk shape", _parse_chunks, [8, 32, 32]),
    ParameterDef("shards", "shape", "format", "shard shape", _parse_shards, [8, 64, 64]),
    ParameterDef(
        "transfer_size",
        "size",
        "format",
        "bytes per I/O call",
        lambda v, p, w: positive_size(v, p),
        "1MiB",
    ),
    ParameterDef(
        "codec", "enum", "format", "compression codec", _wrap(codecs.parse_codec_name), "zlib"
    ),
    ParameterDef("level", "count", "format", "compression level", _count(0, 22), 4),
    ParameterDef(
        "shuffle", "enum", "format", "shuffle filter", _wrap(codecs.parse_shuffle), "byte"
    ),
    ParameterDef(
        "chunk_cache", "size", "cache", "chunk cache size", lambda v, p, w: byte_size(v, p), "64MiB"
    ),
    ParameterDef(
        "concurrency", "count", "parallel", "processes at once", _count(1, 256), 2, generic=True
    ),
    # parallel I/O (the mpiio backend; IOR's vocabulary)
    ParameterDef("nprocs", "count", "parallel", "MPI processes", _count(1, 65536), 4),
    ParameterDef(
        "block_size",
        "size",
        "parallel",
        "bytes per rank",
        lambda v, p, w: positive_size(v, p),
        "4MiB",
    ),
    ParameterDef("layout", "enum", "parallel", "file layout", _one_of("shared", "fpp"), "fpp"),
    ParameterDef(
        "io", "enum", "MPI", "MPI-IO calls", _one_of("collective", "independent"), "independent"
    ),
    ParameterDef(
        "access",
        "enum",
        "parallel",
        "access pattern",
        _one_of("contiguous", "strided", "block3d"),
        "strided",
    ),
    ParameterDef("hints", "name", "MPI", "MPI-IO hint set", _parse_hint_set_name, "cb"),
    ParameterDef(
        "stripe_count", "count", "file system", "Lustre stripe count", _count(-1, 2000), 4
    ),
    ParameterDef(
        "stripe_size", "size", "file system", "Lustre stripe size", _parse_stripe_size, "1MiB"
    ),
    ParameterDef(
        "preallocate",
        "enum",
        "file system",
        "space allocated before the writes",
        _parse_switch,
        "on",
    ),
    # POSIX file-level knobs (the posix backend)
    ParameterDef("direct", "enum", "file system", "O_DIRECT (no page cache)", _parse_switch, "on"),
    ParameterDef(
        "fadvise",
        "enum",
        "file system",
        "posix_fadvise advice",
        _one_of("none", "sequential", "random"),
        "sequential",
    ),
    ParameterDef(
        "sync",
        "enum",
        "file system",
        "how writes reach the disk",
        _one_of("fsync", "fdatasync", "dsync"),
        "fdatasync",
    ),
    # HDF5 file-level knobs (h5py; netCDF4 where netCDF-C exposes them)
    ParameterDef(
        "alignment", "size", "format", "HDF5 alignment interval (0: none)", _off_or_size, "1MiB"
    ),
    ParameterDef(
        "alignment_threshold",
        "size",
        "format",
        "HDF5 alignment threshold",
        lambda v, p, w: byte_size(v, p),
        "64KiB",
    ),
    ParameterDef(
        "meta_block_size", "size", "format", "HDF5 metadata block size", _positive, "1MiB"
    ),
    ParameterDef(
        "sieve_buf_size", "size", "format", "HDF5 data sieve buffer size", _positive, "1MiB"
    ),
    ParameterDef(
        "libver",
        "enum",
        "format",
        "HDF5 file format versions (lower bound)",
        _one_of("earliest", "v110", "v112", "v114", "latest"),
        "latest",
    ),
    ParameterDef(
        "page_size", "size", "format", "HDF5 file-space page size (0: not paged)", _page, "4MiB"
    ),
    ParameterDef(
        "page_buffer", "size", "cache", "HDF5 page buffer size (0: none)", _off_or_size, "16MiB"
    ),
    ParameterDef(
        "fill_time",
        "enum",
        "format",
        "HDF5 fill time",
        _one_of("ifset", "alloc", "never"),
        "never",
    ),
    ParameterDef(
        "alloc_time",
        "enum",
        "format",
        "HDF5 space allocation time",
        _one_of("default", "early", "incr", "late"),
        "early",
    ),
    ParameterDef(
        "cache_slots", "count", "cache", "chunk cache hash slots", _count(1, 2**24), 12421
    ),
    ParameterDef(
        "cache_preemption",
        "fraction",
        "cache",
        "chunk cache preemption (w0)",
        _parse_fraction,
        0.75,
    ),
    # netCDF4
    ParameterDef("fill", "enum", "format", "netCDF fill mode", _parse_switch, "off"),
    ParameterDef(
        "format",
        "enum",
        "format",
        "netCDF file format",
        _one_of("NETCDF4", "NETCDF4_CLASSIC", "NETCDF3_64BIT_DATA"),
        "NETCDF4_CLASSIC",
    ),
    ParameterDef(
        "quantize",
        "name",
        "format",
        "lossy quantisation (mode:digits or bits)",
        _parse_quantize,
        "bitround:10",
    ),
    # Zarr
    ParameterDef(
        "async_concurrency", "count", "parallel", "zarr async.concurrency", _count(1, 1024), 10
    ),
    ParameterDef(
        "write_empty_chunks",
        "enum",
        "format",
        "store chunks equal to the fill value",
        _parse_switch,
        "off",
    ),
    ParameterDef(
        "shard_index", "enum", "format", "shard index location", _one_of("start", "end"), "start"
    ),
    # MPI-IO hints as typed parameters (merged into the trial's hint set)
    ParameterDef(
        "cb_nodes", "count", "MPI", "collective buffering aggregators", _count(1, 65536), 2
    ),
    ParameterDef("cb_buffer_size", "size", "MPI", "collective buffer size", _positive, "16MiB"),
    ParameterDef(
        "striping_factor",
        "count",
        "MPI",
        "MPI-IO striping factor (stripe count)",
        _count(1, 2000),
        4,
    ),
    ParameterDef(
        "striping_unit",
        "size",
        "MPI",
        "MPI-IO striping unit (stripe size)",
        _parse_stripe_size,
        "1MiB",
    ),
)
