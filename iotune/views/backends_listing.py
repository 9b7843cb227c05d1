"""What ``iotune backends`` prints: each format's library, parallel support and knobs.

Kept apart from :mod:`iotune.views.console` (the texts of plans and results): this
one asks the registry of backends, the MPI library and the installed extras.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iotune.backends.base import Backend


def backends_text() -> str:
    """Every registered backend: parallel support, its library, then its knobs by group."""
    from iotune.backends import backend_names, get_backend

    classes = [get_backend(name) for name in backend_names()]
    head = ["backend", "parallel", "library"]
    rows, why_not = [], []
    for cls in classes:
        ok, detail = cls.available()
        parallel = "-"
        if "nprocs" in cls.parameters:
            supported, reason = cls.parallel_support()
            parallel = "yes" if supported else "no"
            if not supported:  # where a build could have it, say why this one has not
                why_not.append(f"{cls.name}: parallel (nprocs > 1) unavailable: {reason}")
        library = f"{cls.library} {detail}" if ok else f"NOT AVAILABLE: {detail}"
        rows.append([cls.name, parallel, library])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [head, *rows]
    ]
    lines += [
        "",
        "parameters of each backend, by group (n/a: accepted, recorded as not applicable):",
    ]
    width = max(len(cls.name) for cls in classes)
    for cls in classes:
        for i, (group, names) in enumerate(_knobs(cls).items()):
            lines.append(f"  {(cls.name if i == 0 else '').ljust(width)}  {group}: {names}")
    from iotune.core.extras import EXTRAS, installed
    from iotune.mpi.library import describe_mpi

    lines.append(f"MPI library (mpiio, h5py nprocs > 1): {describe_mpi()}")
    have = [e for e, m in _EXTRA_MODULES.items() if installed(m)]
    lines.append(f"extras installed: {', '.join(have) or 'none'} (of {', '.join(EXTRAS)})")
    return "\n".join(lines + why_not)


def backends_info() -> dict[str, Any]:
    """What ``iotune backends`` says, as data: each backend, the MPI library, the extras."""
    from iotune.backends import backend_names, get_backend
    from iotune.core.extras import EXTRAS, installed
    from iotune.mpi.library import describe_mpi

    found = []
    for name in backend_names():
        cls = get_backend(name)
        ok, detail = cls.available()
        parallel = cls.parallel_support() if "nprocs" in cls.parameters else (False, "")
        found.append(
            {
                "name": name,
                "description": cls.description,
                "parameters": list(cls.parameters),
                "not_applicable": list(cls.inapplicable),
                "library": cls.library,
                "available": ok,
                "detail": detail,
                "extra": cls.extra,
                "parallel": {"supported": parallel[0], "detail": parallel[1]},
            }
        )
    have = [e for e, m in _EXTRA_MODULES.items() if installed(m)]
    return {
        "backends": found,
        "mpi_library": describe_mpi(),
        "extras": list(EXTRAS),
        "installed": have,
    }


#: one module per extra that tells whether it is installed
_EXTRA_MODULES = {
    "mpi": "mpi4py",
    "jupyter": "papermill",
    "search": "optuna",
    "darshan": "darshan",
    "jobqueue": "dask_jobqueue",
    "objectstore": "obstore",
}


def _knobs(cls: type[Backend]) -> dict[str, str]:
    """The backend's parameters as ``{group: "chunks, codec, ..."}``, in the registry's order."""
    from iotune.model.parameters import GROUPS, PARAMETERS

    groups: dict[str, list[str]] = {g: [] for g in GROUPS}
    for name, definition in PARAMETERS.items():
        if name in cls.parameters:
            mark = " (n/a)" if name in cls.inapplicable else ""
            groups[definition.group].append(name + mark)
    return {g: ", ".join(names) for g, names in groups.items() if names}
