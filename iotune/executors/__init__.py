"""Executors run trial tasks and hand back results as they finish."""

from __future__ import annotations

from iotune.errors import UsageError
from iotune.executors.base import Executor

_REGISTRY = {"serial": "iotune.executors.serial:SerialExecutor"}


def get_executor(name: str) -> type[Executor]:
    """Return the executor class registered as ``name``."""
    import importlib

    try:
        module_name, _, class_name = _REGISTRY[name].partition(":")
    except KeyError:
        raise UsageError(f"unknown executor {name!r}; allowed: {', '.join(_REGISTRY)}") from None
    return getattr(importlib.import_module(module_name), class_name)
