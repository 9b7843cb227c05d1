"""One vocabulary for lossy quantisation, and how each library spells it.

A spec says ``quantize: bitround:10`` (keep 10 mantissa bits), ``digits:3``
(keep 3 significant decimal digits) or ``bitgroom:3`` (netCDF-C's original
digit-based method).  netCDF-C quantises inside the library
(``nc_def_var_quantize``: ``BitRound``, ``GranularBitRound`` for ``digits``,
``BitGroom``); Zarr does it with numcodecs' ``BitRound`` filter, ``digits:N``
as the ``ceil(N * log2(10))`` mantissa bits that keep N significant digits
(numcodecs' ``Quantize`` counts digits after the decimal point, not significant
ones, so it would mean something else for every value range).  Every quantised
trial also measures what it cost: :class:`ErrorMeter` compares what was stored
with what was written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from iotune.core.errors import NotApplicable

#: mode -> what its number counts
MODES: dict[str, str] = {"bitround": "bits", "digits": "digits", "bitgroom": "digits"}
#: netCDF-C's name of each mode (netCDF4-python's ``quantize_mode``)
NETCDF_MODES = {"bitround": "BitRound", "digits": "GranularBitRound", "bitgroom": "BitGroom"}
#: mantissa bits and meaningful decimal digits of each float type
_LIMITS = {4: (23, 7), 8: (52, 15)}


@dataclass(frozen=True)
class Quantize:
    """A quantisation: ``mode`` (``off`` or one of :data:`MODES`) and what it keeps."""

    mode: str = "off"
    keep: int = 0

    @property
    def lossy(self) -> bool:
        """Whether the stored values may differ from the written ones."""
        return self.mode != "off"

    @property
    def label(self) -> str:
        """How a spec and the results write it: ``off`` or ``bitround:10``."""
        return "off" if not self.lossy else f"{self.mode}:{self.keep}"

    @classmethod
    def from_params(cls, params: Any) -> Quantize:
        """The quantisation of a trial's (validated) parameters; ``off`` when absent."""
        label = params.get("quantize") or "off"
        if label == "off":
            return cls()
        mode, keep = str(label).split(":")
        return cls(mode, int(keep))


def parse(value: object) -> Quantize:
    """Parse a spec's ``quantize`` value (checked against the data by :func:`check_dtype`).

    Raises
    ------
    ValueError
        With a message naming the bad value and what is allowed.
    """
    if value in (False, None, "off", "none"):
        return Quantize()
    allowed = "'off' or MODE:N with MODE one of " + ", ".join(MODES)
    if not isinstance(value, str) or value.count(":") != 1:
        raise ValueError(f"expected {allowed} (e.g. bitround:10, digits:3), got {value!r}")
    mode, _, number = value.partition(":")
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} in {value!r}; allowed: {', '.join(MODES)}")
    bits, digits = _LIMITS[8]
    most = bits if MODES[mode] == "bits" else digits
    try:
        keep = int(number)
    except ValueError:
        keep = 0
    if not 1 <= keep <= most:
        raise ValueError(f"{mode} keeps 1 to {most} {MODES[mode]}, got {number!r}")
    return Quantize(mode, keep)


def check_dtype(q: Quantize, dtype: str) -> None:
    """Raise NotApplicable unless data of ``dtype`` can be quantised as ``q`` asks."""
    if not q.lossy:
        return
    kind = np.dtype(dtype)
    if kind.kind != "f" or kind.itemsize not in _LIMITS:
        raise NotApplicable(f"quantize {q.label}: needs float32 or float64 data, not {kind}")
    bits, digits = _LIMITS[kind.itemsize]
    most = bits if MODES[q.mode] == "bits" else digits
    if q.keep > most:
        raise NotApplicable(f"quantize {q.label}: {kind} has only {most} {MODES[q.mode]}")


def netcdf4_kwargs(q: Quantize) -> dict[str, Any]:
    """``createVariable`` keywords of netCDF4-python for ``q`` (none when off)."""
    if not q.lossy:
        return {}
    return {"significant_digits": q.keep, "quantize_mode": NETCDF_MODES[q.mode]}


def check_zarr(q: Quantize) -> None:
    """Raise NotApplicable for a mode Zarr has no filter for (BitGroom)."""
    if q.mode == "bitgroom":
        raise NotApplicable(
            f"quantize {q.label}: BitGroom exists only in netCDF-C; zarr has bitround and digits"
        )


def zarr_filters(q: Quantize) -> list[Any]:
    """numcodecs filters for a Zarr v3 array that quantise as ``q`` asks."""
    check_zarr(q)
    if not q.lossy:
        return []
    import warnings

    import zarr.codecs.numcodecs as zn
    from zarr.errors import ZarrUserWarning

    with warnings.catch_warnings():
        # numcodecs filters are outside the Zarr v3 spec; zarr says so for every one made
        warnings.simplefilter("ignore", ZarrUserWarning)
        return [zn.BitRound(keepbits=zarr_bits(q))]


def zarr_bits(q: Quantize) -> int:
    """Mantissa bits Zarr's BitRound keeps for ``q``: N bits, or enough for N digits."""
    return q.keep if q.mode == "bitround" else math.ceil(q.keep * math.log2(10))


class ErrorMeter:
    """The error stored values carry, accumulated slab by slab.

    ``digits_kept`` is the number of significant decimal digits every value
    keeps: ``floor(-log10(max relative error))``.
    """

    def __init__(self) -> None:
        self.max_abs = 0.0
        self.max_rel = 0.0

    def update(self, written: np.ndarray, stored: np.ndarray) -> None:
        """Compare one slab as written with the same slab read back."""
        a = written.astype(np.float64, copy=False)
        diff = np.abs(stored.astype(np.float64, copy=False) - a)
        if diff.size:
            self.max_abs = max(self.max_abs, float(diff.max()))
            nonzero = a != 0
            if nonzero.any():
                self.max_rel = max(self.max_rel, float((diff[nonzero] / np.abs(a[nonzero])).max()))

    def result(self) -> dict[str, float]:
        """``max_abs_error``, ``max_rel_error`` and ``digits_kept`` (inf when exact)."""
        digits = math.inf if self.max_rel == 0 else math.floor(-math.log10(self.max_rel))
        return {
            "max_abs_error": self.max_abs,
            "max_rel_error": self.max_rel,
            "digits_kept": float(digits),
        }
