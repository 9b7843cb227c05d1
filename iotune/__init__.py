"""iotune: find the storage settings that make scientific data fast to write and read.

The public API is imported lazily so ``import iotune`` stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_API = {
    "load_spec": "iotune.api",
    "make_plan": "iotune.run.plan",
    "run": "iotune.api",
    "save_plots": "iotune.api",
    "open_results": "iotune.results.dataset",
    "recommend": "iotune.analysis.recommend",
    "explore": "iotune.widgets",
    "merge": "iotune.results.merge",
}

__all__ = [*_API, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _API:
        import importlib

        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'iotune' has no attribute {name!r}")
