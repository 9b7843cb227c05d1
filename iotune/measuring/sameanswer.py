"""Whether a layout changed the answer of the user's function: its result against the reference.

A result (xarray Dataset or DataArray, NumPy array, dict/tuple/list of them,
scalar) is flattened to ``{where: array}``; a trial's flattened result must
match the reference's in keys, shapes and values.  Integers and other exact
types must be equal.  Floating-point values may differ by the order dask sums
them in (another chunking, another order): within :data:`ROUNDING` of the
array's largest value.  A quantised trial may differ by what it kept too: its
relative limit (:func:`lossy_limit`) times the largest value of the data or
the result.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from iotune.core.errors import VerificationError
from iotune.model.quantize import MODES, Quantize

#: relative rounding allowed in floating-point results of a lossless trial, by item size
ROUNDING = {2: 1e-2, 4: 1e-5, 8: 1e-12}


def flatten(value: Any, where: str = "") -> dict[str, np.ndarray]:
    """``{where: array}`` for every array in a (forced) result: ``['tas']``, ``[0]``, ..."""
    if isinstance(value, dict):
        out: dict[str, np.ndarray] = {}
        for key, item in value.items():
            out |= flatten(item, f"{where}[{key!r}]")
        return out
    if isinstance(value, list | tuple):
        out = {}
        for i, item in enumerate(value):
            out |= flatten(item, f"{where}[{i}]")
        return out
    variables = getattr(value, "variables", None)  # an xarray Dataset: data and coordinates
    if variables is not None and hasattr(value, "data_vars"):
        return {f"{where}[{name!r}]": np.asarray(var.values) for name, var in variables.items()}
    if hasattr(value, "coords") and hasattr(value, "values"):  # an xarray DataArray
        out = {where or "[result]": np.asarray(value.values)}
        for name, coord in value.coords.items():
            out[f"{where}.coords[{name!r}]"] = np.asarray(coord.values)
        return out
    return {where or "[result]": np.asarray(value)}


def lossy_limit(q: Quantize) -> float:
    """The relative error a stored value of a ``q``-quantised trial may carry (0: lossless)."""
    if not q.lossy:
        return 0.0
    if MODES[q.mode] == "bits":
        return 2.0**-q.keep
    return 10.0 ** (1 - q.keep)


def compare(
    reference: dict[str, np.ndarray],
    got: dict[str, np.ndarray],
    *,
    relative: float = 0.0,
    scale: float = 0.0,
) -> None:
    """Raise VerificationError naming the largest difference of ``got`` from ``reference``.

    Parameters
    ----------
    relative
        The trial's lossy limit (:func:`lossy_limit`); 0 for a lossless trial.
    scale
        The largest magnitude of the data the function read, which a lossy
        difference is relative to (beside the result's own).
    """
    if set(reference) != set(got):
        raise VerificationError(
            f"result differs from the reference: it holds {sorted(got)}, "
            f"the reference {sorted(reference)}"
        )
    worst: tuple[float, str, float] | None = None  # (excess over allowed, message, diff)
    for key, want in reference.items():
        have = got[key]
        if want.shape != have.shape:
            raise VerificationError(
                f"result differs from the reference: {key} has shape {have.shape}, "
                f"the reference {want.shape}"
            )
        found = _largest(key, want, have, relative=relative, scale=scale)
        if found is not None and (worst is None or found[0] > worst[0]):
            worst = found
    if worst is not None:
        raise VerificationError(f"result differs from the reference: {worst[1]}")


def _largest(
    key: str, want: np.ndarray, have: np.ndarray, *, relative: float, scale: float
) -> tuple[float, str, float] | None:
    """The largest difference beyond what is allowed, described; None when within it."""
    if want.dtype.kind not in "fc" and have.dtype.kind not in "fc":
        if want.dtype.kind in "biu" and have.dtype.kind in "biu":
            diff = np.abs(want.astype(np.float64) - have.astype(np.float64))
        else:  # strings, dates, objects: equal or not
            diff = (want != have).astype(np.float64)
        allowed = 0.0
    else:
        a, b = want.astype(np.complex128 if want.dtype.kind == "c" else np.float64), have
        b = b.astype(a.dtype)
        diff = np.abs(a - b)
        diff = np.where(np.isnan(a) & np.isnan(b), 0.0, np.where(np.isnan(diff), math.inf, diff))
        finite = np.abs(a[np.isfinite(a)])
        largest = float(finite.max()) if finite.size else 0.0
        item = min(want.dtype.itemsize, have.dtype.itemsize)
        rounding = ROUNDING.get(item if want.dtype.kind == "f" else item // 2, 1e-12)
        allowed = rounding * largest + relative * max(largest, scale)
    if not diff.size or float(diff.max()) <= allowed:
        return None
    at = np.unravel_index(int(np.argmax(diff)), diff.shape)
    index = "[" + ", ".join(map(str, at)) + "]" if at else ""
    worst = float(diff[at])
    text = (
        f"largest difference {worst:.6g} at {key}{index} "
        f"(reference {want[at].tolist()!r}, got {have[at].tolist()!r}; allowed {allowed:.3g})"
    )
    return worst - allowed, text, worst
