"""Executors run trial tasks and hand back results as they finish."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iotune.errors import UsageError

if TYPE_CHECKING:  # the package stays light: spawned workers import it before NumPy
    from iotune.executors.base import Executor
    from iotune.model.spec import ExecutionSpec

_REGISTRY = {
    "serial": "iotune.executors.serial:SerialExecutor",
    "dask": "iotune.executors.dask_:DaskExecutor",
}


def make_executor(execution: ExecutionSpec) -> Executor:
    """Start the executor a sweep's ``execution`` section asks for."""
    cls = get_executor(execution.executor)
    if execution.executor == "dask":
        try:
            return cls(
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
    import importlib

    try:
        module_name, _, class_name = _REGISTRY[name].partition(":")
    except KeyError:
        raise UsageError(f"unknown executor {name!r}; allowed: {', '.join(_REGISTRY)}") from None
    return getattr(importlib.import_module(module_name), class_name)
