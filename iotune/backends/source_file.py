"""What the backends that read the user's own file (``inplace``, ``virtual``) ask of it.

Both read the source's variable as it is stored: the workload must be a ``field: file``
one, and the workload's shape the source's (no crop, tile or fidelity).
"""

from __future__ import annotations

import functools

from iotune.core.errors import NotApplicable
from iotune.model.spec import Workload


@functools.cache
def source_shape(path: str, variable: str) -> tuple[int, ...]:
    """The shape of ``variable`` in the source at ``path`` (a file or a glob of them)."""
    from iotune.measuring.data import describe_file

    return tuple(describe_file(path, variable)["shape"].values())


def check_read_as_held(backend: str, what: str, workload: Workload) -> None:
    """Refuse a point whose workload is not the source's variable as it is stored.

    Parameters
    ----------
    backend
        The backend's name, for the reason.
    what
        What it does with the source, as in ``"reads a source file"``.

    Raises
    ------
    NotApplicable
        The workload is generated, or its shape is not the source's.
    """
    if workload.field != "file" or workload.path is None or workload.variable is None:
        raise NotApplicable(f"{backend} {what}: it needs workload.field file, not {workload.field}")
    source = source_shape(workload.path, workload.variable)
    if tuple(workload.shape) != source:
        raise NotApplicable(
            f"{backend} reads {workload.variable!r} as the source holds it, shape "
            f"{source}, not the workload's {tuple(workload.shape)} (no crop, tile or fidelity)"
        )
