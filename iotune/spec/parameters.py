"""Sweep parameters: the registry of names, one parser per parameter, list = swept."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from iotune import codecs
from iotune.model.checks import byte_size, choice, fail, integer, mapping, positive_size, section
from iotune.model.spec import Parameter

if TYPE_CHECKING:
    from iotune.model.spec import Workload


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


def _parse_level(value: object, path: str, workload: Workload) -> int:
    return integer(value, path, minimum=0, maximum=22)


def _wrap(parser: Callable[[object], Any]) -> Callable[[object, str, Workload], Any]:
    def parse(value: object, path: str, workload: Workload) -> Any:
        try:
            return parser(value)
        except ValueError as err:
            raise fail(path, str(err)) from err

    return parse


def _parse_shards(value: object, path: str, workload: Workload) -> str | tuple[int, ...]:
    if value == "none":
        return "none"
    shards = _parse_chunks(value, path, workload)
    if isinstance(shards, str):
        raise fail(path, f"expected 'none' or a shard shape like [64, 256, 256], got {value!r}")
    return shards


PARAMETERS: dict[str, Callable[[object, str, Workload], Any]] = {
    "chunks": _parse_chunks,
    "shards": _parse_shards,
    "transfer_size": lambda v, p, w: positive_size(v, p),
    "codec": _wrap(codecs.parse_codec_name),
    "level": _parse_level,
    "shuffle": _wrap(codecs.parse_shuffle),
    "chunk_cache": lambda v, p, w: byte_size(v, p),
    "concurrency": lambda v, p, w: integer(v, p, minimum=1, maximum=256),
    # parallel I/O (the mpiio backend; IOR's vocabulary)
    "nprocs": lambda v, p, w: integer(v, p, minimum=1, maximum=65536),
    "block_size": lambda v, p, w: positive_size(v, p),
    "layout": lambda v, p, w: choice(v, p, ("shared", "fpp")),
    "io": lambda v, p, w: choice(v, p, ("collective", "independent")),
    "access": lambda v, p, w: choice(v, p, ("contiguous", "strided", "block3d")),
    "hints": lambda v, p, w: _parse_hint_set_name(v, p),
    "stripe_count": lambda v, p, w: integer(v, p, minimum=-1, maximum=2000),
    "stripe_size": lambda v, p, w: _parse_stripe_size(v, p),
}


def _parse_hint_set_name(value: object, path: str) -> str:
    # the names are checked against the top-level ``hints`` section by the spec parser
    if not isinstance(value, str) or not value:
        raise fail(path, f"expected the name of a hint set from the 'hints' section, got {value!r}")
    return value


def _parse_stripe_size(value: object, path: str) -> int:
    size = positive_size(value, path)
    if size % 65536:  # what lfs setstripe -S demands
        raise fail(path, f"{value!r} is not a multiple of 64KiB, which Lustre requires")
    return size


def parse_parameter(name: str, value: object, workload: Workload) -> Parameter:
    """Parse one ``parameters`` entry; a list is a swept dimension."""
    parse = PARAMETERS[name]
    path = f"parameters.{name}"
    is_single_shape = (
        name == "chunks"
        and isinstance(value, list)
        and value
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )
    if isinstance(value, list) and not is_single_shape:
        if not value:
            raise fail(path, "empty list; give at least one value")
        values = tuple(parse(v, f"{path}[{i}]", workload) for i, v in enumerate(value))
        if len(set(values)) != len(values):
            raise fail(path, f"{value!r} lists a value twice")
        return Parameter(name, values, swept=True)
    return Parameter(name, (parse(value, path, workload),), swept=False)


def _check_levels(params: dict[str, Parameter]) -> None:
    if "level" not in params:
        return
    names = params["codec"].values if "codec" in params else ("none",)
    infos = [codecs.CODECS[n] for n in names if codecs.CODECS[n].family != "none"]
    if not infos:
        return
    for level in params["level"].values:
        if not any(i.min_level <= level <= i.max_level for i in infos):
            ranges = ", ".join(f"{i.name}: {i.level_range()}" for i in infos)
            raise fail(
                "parameters.level", f"{level} is out of range for every listed codec ({ranges})"
            )


def parse_parameters(value: object, workload: Workload, allowed: tuple[str, ...]) -> tuple:
    data = mapping(section(value), "parameters", allowed)
    params = {name: parse_parameter(name, v, workload) for name, v in data.items()}
    _check_levels(params)
    return tuple(params.values())
