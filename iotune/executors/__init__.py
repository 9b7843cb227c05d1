"""Executors run trial tasks and hand back results as they finish.

Third-party executors register under the ``iotune.executors`` entry point group
(:mod:`iotune.core.plugins`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iotune.core.errors import UsageError

if TYPE_CHECKING:  # the package stays light: spawned workers import it before NumPy
    from iotune.executors.base import Executor
    from iotune.model.spec import ExecutionSpec

GROUP = "iotune.executors"


def make_executor(execution: ExecutionSpec) -> Executor:
    """Start the executor a sweep's ``execution`` section asks for."""
    cls = get_executor(execution.executor)
    if execution.executor == "dask":
        try:
            dask: Any = cls  # the dask executor's own options, which the base class lacks
            return dask(
                workers=execution.workers,
                scheduler=execution.scheduler,
                cluster=execution.cluster,
                per_host=execution.per_host,
            )
        except (OSError, TimeoutError) as err:
            where = execution.scheduler or "the dask cluster"
            raise UsageError(f"cannot start or reach {where}: {err}") from err
    return cls()


def get_executor(name: str) -> type[Executor]:
    """Return the executor class registered as ``name``."""
    from iotune.core.plugins import EXECUTORS, load

    return load(GROUP, name, EXECUTORS)
