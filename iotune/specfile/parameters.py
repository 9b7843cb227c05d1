"""Sweep parameters: a list is a swept dimension; each value parses by the registry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iotune.model import codecs
from iotune.model.checks import fail, mapping, section
from iotune.model.parameters import PARAMETERS
from iotune.model.spec import Parameter

if TYPE_CHECKING:
    from iotune.model.spec import Workload


def parse_parameter(name: str, value: object, workload: Workload) -> Parameter:
    """Parse one ``parameters`` entry; a list is a swept dimension."""
    definition = PARAMETERS[name]
    parse = definition.parse
    path = f"parameters.{name}"
    is_single_shape = (
        definition.kind == "shape"
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
