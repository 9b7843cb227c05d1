"""The ``baseline`` section: the application's own settings, a point of the swept grid.

A spec made from a Darshan log (:mod:`iotune.darshan_.generate`) names the
settings the application ran with, so ``recommend`` can say how much faster
the recommended ones are than *yours*, not only than the library's defaults.
Each value must be one of its parameter's values, so the point is measured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iotune.model.checks import fail, mapping, section
from iotune.model.parameters import PARAMETERS

if TYPE_CHECKING:
    from iotune.model.spec import Parameter, Workload


def show(name: str, value: Any) -> str:
    """A parameter's value as a person writes it in a spec (``1MiB``, ``8x128x128``)."""
    return PARAMETERS[name].show(value)


def parse_baseline(
    value: object, parameters: tuple[Parameter, ...], workload: Workload
) -> dict[str, Any]:
    """Validate ``baseline``: ``{parameter: value}`` with each value among the parameter's.

    Returns
    -------
    dict
        ``{parameter: label}`` as the results store coordinates (chunk shapes as labels).

    Raises
    ------
    SpecError
        An unknown parameter, a value that does not parse, or one the sweep does not measure.
    """
    params = {p.name: p for p in parameters}
    data = mapping(section(value), "baseline", tuple(params))
    found: dict[str, Any] = {}
    for name, raw in data.items():
        path, param = f"baseline.{name}", params[name]
        parsed = PARAMETERS[name].parse(raw, path, workload)
        labels = param.labels()
        label = labels[param.values.index(parsed)] if parsed in param.values else None
        if label is None:
            allowed = ", ".join(show(name, v) for v in labels)
            raise fail(
                path,
                f"{show(name, parsed)} is not among the values of parameters.{name}, "
                f"so it would not be measured; allowed: {allowed}",
            )
        found[name] = label
    return found
