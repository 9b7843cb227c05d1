"""The ``compare`` list: which ways of reading a source file ``recommend`` weighs.

``compare: [in-place, references, rewrite]`` asks for the decision of
:mod:`iotune.analysis.decision`: the source read as it is (a backend whose write makes
nothing and whose reads open the source's files with xarray), through references (a
backend whose write makes references to the source) and rewritten (a backend whose
write copies the data); each backend says which it measures (``Backend.one_off``).
Each named way must have its backend in the sweep's ``backend`` list, named there by
the user (nothing is added: the list is what is measured, each backend's knobs swept
as any other's), so ``compare`` changes nothing that is measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.model.checks import fail
from iotune.model.spec import WAYS, Workload
from iotune.specfile.baselines import parse_baselines

#: what each way's backends make, for the message naming a way none of them measures
MAKES = {
    "in-place": "nothing (its reads open the source as it is)",
    "references": "references to the source",
    "rewrite": "a copy of the data",
}


def parse_compare(
    data: Mapping[str, Any], backends: tuple[str, ...], workload: Workload
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Validate ``baselines`` and ``compare``.

    Parameters
    ----------
    data
        The spec's top-level mapping (``baselines`` and ``compare`` read from it).
    backends
        The sweep's backends: each named way needs one that measures it.
    workload
        The sweep's workload: comparing ways needs ``field: file``.

    Returns
    -------
    baselines, compare
        The baselines and the ways.

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
    return baselines, tuple(ways)


def _check_backend(path: str, way: str, backends: tuple[str, ...]) -> None:
    """``way`` needs a backend in the sweep that measures it (its ``one_off``)."""
    from iotune.backends import backend_names, get_backend

    if any(get_backend(b).one_off == way for b in backends):
        return
    measuring = [n for n in backend_names() if get_backend(n).one_off == way]
    raise fail(
        path,
        f"{way!r} needs a backend whose write makes {MAKES[way]}: add one of "
        f"{', '.join(measuring)} to backend (the sweep's backends: {', '.join(backends)})",
    )
