"""The ``compare`` list: which ways of reading a source file ``recommend`` weighs.

``compare: [in-place, references, rewrite]`` asks for the decision of
:mod:`iotune.analysis.decision`: the source read as it is (the ``source`` baseline,
added to ``baselines`` when the list lacks it), through references (a backend whose
write makes references to the source, ``Backend.one_off``) and rewritten (a backend
whose write copies the data).  Each named way must have what measures it in the
sweep; nothing else changes what is measured, so the sweep's digest is its baselines'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.model.checks import fail
from iotune.model.spec import WAYS, Workload
from iotune.specfile.baselines import parse_baselines


def parse_compare(
    data: Mapping[str, Any], backends: tuple[str, ...], workload: Workload
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Validate ``baselines`` and ``compare`` together: ``in-place`` measures ``source``.

    Parameters
    ----------
    data
        The spec's top-level mapping (``baselines`` and ``compare`` read from it).
    backends
        The sweep's backends: each named way needs one of its kind.
    workload
        The sweep's workload: comparing ways needs ``field: file``.

    Returns
    -------
    baselines, compare
        The baselines (``source`` appended when ``in-place`` asks for it) and the ways.

    Raises
    ------
    SpecError
        Not a list of two or more ways, an unknown or repeated way, a generated workload,
        or a way none of the sweep's backends measures.
    """
    baselines = parse_baselines(data.get("baselines"), workload)
    value = data.get("compare")
    if value is None:
        return baselines, ()
    allowed = ", ".join(WAYS)
    if not isinstance(value, list) or len(value) < 2:
        raise fail(
            "compare", f"expected a list of two or more ways, got {value!r}; allowed: {allowed}"
        )
    if workload.field != "file":
        raise fail(
            "compare",
            f"the ways read a source file, so it needs field: file (the workload's field is "
            f"{workload.field!r})",
        )
    ways: list[str] = []
    for i, item in enumerate(value):
        path = f"compare[{i}]"
        if not isinstance(item, str) or item not in WAYS:
            raise fail(path, f"unknown way {item!r}; allowed: {allowed}")
        if item in ways:
            raise fail(path, f"{item!r} is listed twice")
        _check_backend(path, item, backends)
        ways.append(item)
    if "in-place" in ways and "source" not in baselines:
        baselines = (*baselines, "source")
    return baselines, tuple(ways)


def _check_backend(path: str, way: str, backends: tuple[str, ...]) -> None:
    """A way other than in-place needs a backend whose write makes what it reads."""
    from iotune.backends import get_backend

    wanted = None if way == "in-place" else way  # a backend's ``one_off``
    if wanted is None or any(get_backend(b).one_off == wanted for b in backends):
        return
    makes = "references to the source" if wanted == "references" else "a copy of the data"
    raise fail(
        path,
        f"{way!r} needs a backend whose write makes {makes}; the sweep's backends: "
        f"{', '.join(backends)}",
    )
