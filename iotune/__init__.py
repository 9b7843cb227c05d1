"""iotune: find the storage settings that make scientific data fast to write and read.

The public API is imported lazily so ``import iotune`` stays cheap.  The
``ds.iotune`` accessor (:mod:`iotune.results.accessor`) is registered as soon as
xarray is imported, before or after iotune; a process that never touches
xarray (an MPI rank, a concurrent writer) never pays for importing it.
"""

from __future__ import annotations

import importlib as _importlib
import importlib.abc as _abc
import importlib.util as _util
import sys as _sys
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

__version__ = "0.1.0"

if _TYPE_CHECKING:  # what type checkers and IDEs see of the lazy names below
    from iotune.analysis.recommend import recommend
    from iotune.app.api import (
        apply,
        from_darshan,
        load_spec,
        run,
        save_plots,
        tune,
    )
    from iotune.core.errors import (
        ClusterError,
        ConcurrencyError,
        CostWarning,
        DarshanError,
        DeprecatedOptionWarning,
        Interrupted,
        IotuneError,
        IotuneWarning,
        LoaderError,
        LockError,
        LustreError,
        MissingExtraError,
        MpiError,
        NotApplicable,
        PluginWarning,
        RecommendError,
        ResultsError,
        SpecError,
        StorageError,
        StripingWarning,
        UsageError,
        UserCodeError,
        VerificationError,
    )
    from iotune.results.dataset import open_results
    from iotune.results.merge import merge
    from iotune.runner.plan import make_plan
    from iotune.views.widgets import explore

_API = {
    "apply": "iotune.app.api",
    "load_spec": "iotune.app.api",
    "make_plan": "iotune.runner.plan",
    "run": "iotune.app.api",
    "tune": "iotune.app.api",
    "save_plots": "iotune.app.api",
    "open_results": "iotune.results.dataset",
    "recommend": "iotune.analysis.recommend",
    "explore": "iotune.views.widgets",
    "merge": "iotune.results.merge",
    "from_darshan": "iotune.app.api",
}
#: the exceptions and warnings iotune gives on purpose, to catch and to filter
_ERRORS = (
    "IotuneError",
    "UsageError",
    "SpecError",
    "ResultsError",
    "RecommendError",
    "DarshanError",
    "LockError",
    "Interrupted",
    "NotApplicable",
    "ConcurrencyError",
    "MpiError",
    "LustreError",
    "VerificationError",
    "IotuneWarning",
    "StripingWarning",
    "CostWarning",
    "DeprecatedOptionWarning",
    "PluginWarning",
    "StorageError",
    "MissingExtraError",
    "ClusterError",
    "LoaderError",
    "UserCodeError",
)
_API |= dict.fromkeys(_ERRORS, "iotune.core.errors")

#: written out (not built from the tables) so that linters and type checkers read it
__all__ = [
    "ClusterError",
    "ConcurrencyError",
    "CostWarning",
    "DarshanError",
    "DeprecatedOptionWarning",
    "Interrupted",
    "IotuneError",
    "IotuneWarning",
    "LoaderError",
    "LockError",
    "LustreError",
    "MissingExtraError",
    "MpiError",
    "NotApplicable",
    "PluginWarning",
    "RecommendError",
    "ResultsError",
    "SpecError",
    "StorageError",
    "StripingWarning",
    "UsageError",
    "UserCodeError",
    "VerificationError",
    "__version__",
    "apply",
    "explore",
    "from_darshan",
    "load_spec",
    "make_plan",
    "merge",
    "open_results",
    "recommend",
    "run",
    "save_plots",
    "tune",
]


def __getattr__(name: str) -> _Any:
    if name in _API:
        return getattr(_importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'iotune' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names (not the helpers this module imports for itself)."""
    return sorted(__all__)


class _RegisterAfterXarray(_abc.MetaPathFinder):
    """Registers ``ds.iotune`` right after xarray's own import finishes."""

    def find_spec(self, name: str, path: _Any, target: _Any = None) -> _Any:
        if name != "xarray":
            return None
        _sys.meta_path.remove(self)  # once; the other finders locate xarray
        spec = _util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module: _Any) -> None:
            run_module(module)
            _importlib.import_module("iotune.results.accessor")

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if "xarray" in _sys.modules:
    _importlib.import_module("iotune.results.accessor")
elif not any(isinstance(f, _RegisterAfterXarray) for f in _sys.meta_path):
    _sys.meta_path.insert(0, _RegisterAfterXarray())
