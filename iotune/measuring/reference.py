"""The answer every layout must give: the user's function on the workload's values in memory.

Made once per workload and pattern, before the trials that need it, in a
child process (user code never runs in iotune's main process), and kept in
the run's folder, so it does not depend on which trial ran first and a
resumed run compares with the same answer.  The values are the data
generator's (:class:`~iotune.measuring.data.Field`), for ``field: file`` the
source file's as the workload crops or tiles them: what every trial writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from iotune.core.errors import UsageError, UserCodeError
from iotune.measuring import sameanswer, sourceview, usercode
from iotune.measuring.data import Field
from iotune.model.spec import Workload
from iotune.model.userpatterns import UserPattern

#: the variable every backend stores, as a Dataset holds it
VARIABLE = "data"
FOLDER = "references"


def reference_path(folder: Path, workload: Workload, pattern: UserPattern) -> Path:
    """Where the reference of ``pattern`` on ``workload`` is kept under ``folder``.

    Named by what decides it: the workload, the entry and the code's source,
    so an edited function gets a new reference rather than a stale one.
    """
    key = {
        "workload": workload.to_dict(),
        "pattern": pattern.to_dict(),
        "source": _source(pattern),
        "view": sourceview.VERSION,  # a reference made on another view is not this one
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return folder / FOLDER / f"{pattern.name}-{digest}.pkl"


def _source(pattern: UserPattern) -> str:
    """A hash of the code's file, when it can be found without importing it."""
    path = pattern.script_path
    if path is None and pattern.module is not None:
        from importlib.machinery import PathFinder

        first = pattern.module.split(".")[0]
        spec = PathFinder.find_spec(first, [pattern.base] if pattern.base else None)
        origin = spec.origin if spec is not None else None
        path = Path(origin) if origin and "." not in pattern.module else None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path else ""
    except OSError:
        return ""


def ensure(folder: Path, workload: Workload, pattern: UserPattern) -> Path:
    """The reference's file, made now in a child process unless an earlier run made it.

    Raises
    ------
    UsageError
        The function fails on the values in memory: no trial could be checked.
    """
    path = reference_path(folder, workload, pattern)
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        error = pool.submit(make, workload, pattern, path).result()
    if error:
        with contextlib.suppress(OSError):  # made for this reference alone: leave no trace
            path.parent.rmdir()
        raise UsageError(
            f"read.patterns {pattern.name}: {pattern.describe()} failed on the workload's "
            f"values in memory (the answer every layout is checked against): {error}"
        )
    return path


def make(workload: Workload, pattern: UserPattern, path: Path) -> str:
    """Run the function on the values in memory and save its result; the error, or ''."""
    import xarray as xr

    values = Field(workload).slab(0, workload.shape[0])
    # the view the trials give the function: the source's coordinates and decoding
    dataset = sourceview.view(xr.Dataset({VARIABLE: (workload.dims, values)}), workload)
    try:
        result = sameanswer.flatten(usercode.call(pattern, dataset))
    except UserCodeError as err:
        return str(err)
    return _save(pattern, result, _scale(dataset[next(iter(dataset.data_vars))].values), path)


def _scale(values: np.ndarray) -> float:
    """The data's largest magnitude as the function sees it (decoded; masked values left out)."""
    if not values.size or values.dtype.kind not in "fiu":
        return 0.0
    finite = np.abs(values[np.isfinite(values)]) if values.dtype.kind == "f" else np.abs(values)
    return float(finite.max()) if finite.size else 0.0


def _save(pattern: UserPattern, result: dict[str, Any], scale: float, path: Path) -> str:
    saved = {"pattern": pattern.to_dict(), "result": result, "scale": scale}
    partial = path.with_suffix(".partial")
    partial.write_bytes(pickle.dumps(saved))
    partial.replace(path)  # whole or absent: a run stopped now leaves no half reference
    return ""


def load(path: str | Path) -> dict[str, Any]:
    """A saved reference: ``result`` (``{where: array}``) and ``scale`` (the data's largest)."""
    saved: dict[str, Any] = pickle.loads(Path(path).read_bytes())
    return saved
