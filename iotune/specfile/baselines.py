"""The ``baselines`` list: named layouts people get anyway, measured beside the grid.

Not to be confused with the ``baseline`` section (:mod:`iotune.specfile.baseline`),
the application's own settings, which is a point of the grid.  Each name here
becomes an extra measured point whose chunks a library computes
(:mod:`iotune.runner.layouts`).
"""

from __future__ import annotations

from iotune.model.checks import fail
from iotune.model.spec import BASELINES, Workload


def parse_baselines(value: object, workload: Workload) -> tuple[str, ...]:
    """Validate ``baselines``: a list of names from :data:`~iotune.model.spec.BASELINES`.

    Parameters
    ----------
    value
        The spec's ``baselines`` (a name or a list of names; absent: none).
    workload
        The sweep's workload: ``source`` needs ``field: file``.

    Returns
    -------
    tuple of str
        The names, in the spec's order.

    Raises
    ------
    SpecError
        Not a list of strings, an unknown name, a name twice, or ``source`` without a file.
    """
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    allowed = ", ".join(BASELINES)
    if not isinstance(items, list):
        raise fail("baselines", f"expected a list of names, got {value!r}; allowed: {allowed}")
    names: list[str] = []
    for i, item in enumerate(items):
        path = f"baselines[{i}]"
        if not isinstance(item, str) or item not in BASELINES:
            raise fail(path, f"unknown baseline {item!r}; allowed: {allowed}")
        if item in names:
            raise fail(path, f"{item!r} is listed twice")
        if item == "source" and workload.field != "file":
            raise fail(
                path,
                f"'source' is the source file's own layout, so it needs field: file "
                f"(the workload's field is {workload.field!r})",
            )
        names.append(item)
    return tuple(names)
