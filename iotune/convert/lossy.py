"""Quantised (lossy) targets: what may be quantised, the error allowed, and the comparison.

The library quantises each region as it is written (netCDF-C's ``nc_def_var_quantize``
in a netCDF4 target, numcodecs' ``BitRound`` filter in a Zarr one; see
:mod:`iotune.model.quantize`).  Verification then allows, per value, the error the
quantisation is bound to (``bitround:N`` keeps N mantissa bits: relative error at
most ``2**-(N+1)``; ``digits:N`` and ``bitgroom:N`` keep N significant digits: at
most ``10**(1-N) / 2``), tightened by the objective's ``--max-error`` (absolute) and
``--min-digits`` (relative ``10**-D``) when given.  Fill values and NaN must stay
exactly where they are.  The largest errors seen are reported per variable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from iotune.core.errors import NotApplicable, UsageError
from iotune.model import quantize
from iotune.model.quantize import ErrorMeter, Quantize


@dataclass(frozen=True)
class Tolerance:
    """The error allowed per value: ``max_rel`` times the value, at most ``max_abs``."""

    label: str
    max_rel: float
    max_abs: float | None = None

    def __post_init__(self) -> None:
        if not self.max_rel >= 0 or (self.max_abs is not None and not self.max_abs >= 0):
            raise UsageError(f"quantize {self.label}: error limits must be >= 0")

    def text(self) -> str:
        """``relative 4.9e-04`` (and ``, absolute 0.01``) for messages and the report."""
        out = f"relative {self.max_rel:.2g}"
        return out + (f", absolute {self.max_abs:.2g}" if self.max_abs is not None else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "quantize": self.label,
            "max_rel_error": self.max_rel,
            "max_abs_error": self.max_abs,
        }


def parse_quantize(value: object) -> Quantize:
    """A ``quantize`` setting (``off``, ``bitround:10``, ``digits:3``) as a :class:`Quantize`."""
    try:
        return quantize.parse(value)
    except ValueError as err:
        raise UsageError(f"quantize: {err}") from err


def tolerance_of(
    q: Quantize, *, max_error: float | None = None, min_digits: int | None = None
) -> Tolerance | None:
    """The error verification allows for ``q``; None when lossless."""
    if not q.lossy:
        return None
    bound = 2.0 ** -(q.keep + 1) if q.mode == "bitround" else 0.5 * 10.0 ** (1 - q.keep)
    if min_digits is not None:
        bound = min(bound, 10.0**-min_digits)
    return Tolerance(q.label, bound, max_error)


def check_variable(q: Quantize, backend: str, name: str, dtype: Any, attrs: dict[str, Any]) -> None:
    """Refuse a quantisation the format or the variable cannot take.

    Raises
    ------
    UsageError
        Not floating point, a format that does not quantise, or what the format's
        writer refuses (``TargetWriter.check_variable``: a mode it lacks, a fill value
        it would change).
    """
    if not q.lossy:
        return
    from iotune.backends import backend_names, get_backend

    kind = np.dtype(dtype)
    if kind.kind != "f":
        raise UsageError(
            f"{name}: quantize {q.label!r} does not apply to dtype {kind} (allowed: floating point)"
        )
    writers = {n: get_backend(n).apply_target() for n in backend_names()}
    quantising = [n for n, w in writers.items() if w is not None and "quantize" in w.carried]
    writer = writers.get(backend)
    if writer is None or backend not in quantising:
        allowed = ", ".join(quantising)
        raise UsageError(f"quantize {q.label}: {backend} cannot quantise (allowed: {allowed})")
    try:
        quantize.check_dtype(q, str(kind))
        writer.check_variable(q, kind, attrs)
    except NotApplicable as err:
        raise UsageError(f"{name}: {err}") from err


def within(
    expected: np.ndarray,
    got: np.ndarray,
    tolerance: Tolerance,
    *,
    attrs: dict[str, Any],
    meter: ErrorMeter,
) -> bool:
    """Whether ``got`` is ``expected`` within ``tolerance``; the errors go to ``meter``.

    NaN and the variable's fill values must be where they were, exactly.
    """
    if expected.shape != got.shape:
        return False
    a, b = expected.astype(np.float64), got.astype(np.float64)
    exact = np.isnan(a)
    for key in ("_FillValue", "missing_value"):
        for value in np.asarray(attrs.get(key, []), dtype=np.float64).ravel():
            exact |= a == value
    if not np.array_equal(a[exact], b[exact], equal_nan=True):
        return False
    a, b = a[~exact], b[~exact]
    meter.update(a, b)
    allowed = tolerance.max_rel * np.abs(a)
    if tolerance.max_abs is not None:
        allowed = np.minimum(allowed, tolerance.max_abs)
    return bool(np.all(np.abs(b - a) <= allowed))
