"""iotune: find the storage settings that make scientific data fast to write and read.

The public API is imported lazily so ``import iotune`` stays cheap.  The
``ds.iotune`` accessor (:mod:`iotune.results.accessor`) is registered as soon as
xarray is imported, before or after iotune; a process that never touches
xarray (an MPI rank, a concurrent writer) never pays for importing it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from typing import Any

__version__ = "0.1.0"

_API = {
    "load_spec": "iotune.api",
    "make_plan": "iotune.runner.plan",
    "run": "iotune.api",
    "tune": "iotune.api",
    "save_plots": "iotune.api",
    "open_results": "iotune.results.dataset",
    "recommend": "iotune.analysis.recommend",
    "explore": "iotune.widgets",
    "merge": "iotune.results.merge",
    "from_darshan": "iotune.api",
}

__all__ = [*_API, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'iotune' has no attribute {name!r}")


class _RegisterAfterXarray(importlib.abc.MetaPathFinder):
    """Registers ``ds.iotune`` right after xarray's own import finishes."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "xarray":
            return None
        sys.meta_path.remove(self)  # once; the other finders locate xarray
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run_module(module)
            importlib.import_module("iotune.results.accessor")

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if "xarray" in sys.modules:
    importlib.import_module("iotune.results.accessor")
elif not any(isinstance(f, _RegisterAfterXarray) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterAfterXarray())
