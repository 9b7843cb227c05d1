"""How the registry's parameters parse from a spec: one function per kind of value.

Each parser takes ``(value, path, workload)`` and returns the validated value
or raises a :class:`~iotune.core.errors.SpecError` naming ``path``; the factories
(:func:`count`, :func:`one_of`, :func:`wrap`) make such parsers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from iotune.model import quantize
from iotune.model.checks import byte_size, choice, fail, integer, mapping, positive_size

if TYPE_CHECKING:
    from iotune.model.spec import Workload

Parser = Callable[[object, str, "Workload"], Any]


def parse_chunks(value: object, path: str, workload: Workload) -> str | tuple[int, ...]:
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


def parse_shards(value: object, path: str, workload: Workload) -> str | tuple[int, ...]:
    if value == "none":
        return "none"
    shards = parse_chunks(value, path, workload)
    if isinstance(shards, str):
        raise fail(path, f"expected 'none' or a shard shape like [64, 256, 256], got {value!r}")
    return shards


def wrap(parser: Callable[[object], Any]) -> Parser:
    def parse(value: object, path: str, workload: Workload) -> Any:
        try:
            return parser(value)
        except ValueError as err:
            raise fail(path, str(err)) from err

    return parse


def count(minimum: int, maximum: int) -> Parser:
    return lambda v, p, w: integer(v, p, minimum=minimum, maximum=maximum)


def one_of(*choices: str) -> Parser:
    return lambda v, p, w: choice(v, p, choices)


#: the forms VirtualiZarr writes references in (the virtual backend's ``reference``)
REFERENCE_FORMS = ("kerchunk-json", "kerchunk-parquet", "icechunk")


def reference(value: object, path: str, workload: Workload) -> str:
    return choice(value, path, REFERENCE_FORMS)


#: xarray's engines that open a netCDF4/HDF5 source as it is (the inplace backend's ``engine``)
ENGINES = ("netcdf4", "h5netcdf")


def engine(value: object, path: str, workload: Workload) -> str:
    return choice(value, path, ENGINES)


def parse_switch(value: object, path: str, workload: Workload) -> str:
    # YAML reads on/off/true/false as booleans; results store the words
    if isinstance(value, bool):
        return "on" if value else "off"
    return choice(value, path, ("off", "on"))


def parse_fraction(value: object, path: str, workload: Workload) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = float("nan")
    if isinstance(value, bool) or not 0 <= number <= 1:
        raise fail(path, f"expected a number from 0 to 1, got {value!r}")
    return number


def parse_fidelity(value: object, path: str, workload: Workload) -> float:
    """A share of the workload in (0, 1]: 0.125 is an eighth of the time steps."""
    number = parse_fraction(value, path, workload)
    if number == 0:
        raise fail(path, f"expected a share of the workload in (0, 1], got {value!r}")
    return number


def parse_quantize(value: object, path: str, workload: Workload) -> str:
    try:
        return quantize.parse(value).label
    except ValueError as err:
        raise fail(path, str(err)) from err


def parse_hint_set_name(value: object, path: str, workload: Workload) -> str:
    # the names are checked against the top-level ``hints`` section by the spec parser
    if not isinstance(value, str) or not value:
        raise fail(path, f"expected the name of a hint set from the 'hints' section, got {value!r}")
    return value


def parse_stripe_size(value: object, path: str, workload: Workload) -> int:
    size = positive_size(value, path)
    if size % 65536:  # what lfs setstripe -S demands
        raise fail(path, f"{value!r} is not a multiple of 64KiB, which Lustre requires")
    return size


def size(value: object, path: str, workload: Workload) -> int:
    return byte_size(value, path)


def positive(value: object, path: str, workload: Workload) -> int:
    return positive_size(value, path)


def off_or_size(value: object, path: str, workload: Workload) -> int:
    # 0 leaves the property at the library's default, so a sweep can compare with it
    return byte_size(value, path)


def parse_part_size(value: object, path: str, workload: Workload) -> int:
    size = positive_size(value, path)
    if size < 5 * 2**20:  # S3's smallest multipart part (all but the last)
        raise fail(path, f"{value!r} is smaller than 5MiB, S3's smallest multipart part")
    return size


def page(value: object, path: str, workload: Workload) -> int:
    size = byte_size(value, path)
    if 0 < size < 512:  # H5Pset_file_space_page_size's minimum
        raise fail(path, f"{value!r} is smaller than 512 bytes, HDF5's smallest page")
    return size


#: ``dask_chunks``'s words; beside them a mapping ``{dim: n}``, stored as ``dim=n,dim=n``
DASK_CHUNK_WORDS = ("none", "auto", "storage")


def parse_dask_chunks(value: object, path: str, workload: Workload | None) -> str:
    """``open_dataset``'s chunks as a label: a word, or ``{time: 24}`` as ``time=24``.

    The label (``time=24,y=90``, in the workload's dimension order) is also what
    a spec may write back; ``null`` is ``none``.
    """
    if workload is None:  # apply's --settings: the target's dimensions are checked later
        return _dask_chunks_without_workload(value, path)
    allowed = (
        "allowed: none, auto, storage, or a mapping of the workload's dimensions "
        f"({', '.join(workload.dims)}) to chunk lengths, like {{{workload.dims[0]}: 24}}"
    )
    if value is None:
        return "none"
    if isinstance(value, str) and value in DASK_CHUNK_WORDS:
        return value
    if isinstance(value, str) and "=" in value:
        value = dict(_label_item(item, path, allowed) for item in value.split(","))
    if not isinstance(value, Mapping) or not value:
        raise fail(path, f"unknown value {value!r}; {allowed}")
    sizes = dict(zip(workload.dims, workload.shape, strict=True))
    for dim, n in value.items():
        if dim not in sizes:
            raise fail(path, f"{dim!r} is not a dimension of the workload; {allowed}")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= sizes[dim]:
            raise fail(path, f"{dim}: {n!r} is not a chunk length from 1 to {sizes[dim]}")
    return ",".join(f"{d}={value[d]}" for d in workload.dims if d in value)


def _dask_chunks_without_workload(value: object, path: str) -> str:
    """``dask_chunks`` checked as far as it can be without the workload's dimensions."""
    allowed = "allowed: none, auto, storage, or dim=n,dim=n (chunk lengths)"
    if value is None:
        return "none"
    if isinstance(value, str) and value in DASK_CHUNK_WORDS:
        return value
    if isinstance(value, str) and "=" in value:
        value = dict(_label_item(item, path, allowed) for item in value.split(","))
    if not isinstance(value, Mapping) or not value:
        raise fail(path, f"unknown value {value!r}; {allowed}")
    for dim, n in value.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise fail(path, f"{dim}: {n!r} is not a chunk length of at least 1")
    return ",".join(f"{d}={n}" for d, n in value.items())


def _label_item(item: str, path: str, allowed: str) -> tuple[str, object]:
    dim, _, n = item.strip().partition("=")
    try:
        return dim.strip(), int(n)
    except ValueError:
        raise fail(path, f"unknown value {item!r}; {allowed}") from None
