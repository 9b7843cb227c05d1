"""Sizes, numbers and labels: ``"64MiB"`` <-> bytes, ``"123 MiB/s"``, chunk-shape labels."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from fractions import Fraction

_UNITS = {
    "": 1,
    "B": 1,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "K": 2**10,
    "M": 2**20,
    "G": 2**30,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
ALLOWED_SIZE = "a non-negative integer of bytes or a string like '512KiB', '64MiB', '1GiB', '8MB'"


def parse_size(value: object) -> int:
    """Return a size in bytes.

    Parameters
    ----------
    value
        An integer number of bytes or a string with a binary (``KiB``,
        ``MiB``, ``GiB``, ``TiB``; ``K``/``M``/``G`` mean the same) or
        decimal (``KB``, ``MB``, ``GB``) unit.

    Raises
    ------
    ValueError
        The value is negative, not a number or has an unknown unit.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected {ALLOWED_SIZE}, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"size must not be negative, got {value}")
        return value
    if isinstance(value, float):
        raise ValueError(f"expected {ALLOWED_SIZE}, got the float {value!r}")
    if not isinstance(value, str):
        raise ValueError(f"expected {ALLOWED_SIZE}, got {value!r}")
    if value.strip().startswith("-"):
        raise ValueError(f"size must not be negative, got {value!r}")
    match = _SIZE_RE.match(value)
    if not match or match.group(2) not in _UNITS:
        raise ValueError(f"expected {ALLOWED_SIZE}, got {value!r}")
    number = Fraction(match.group(1)) * _UNITS[match.group(2)]
    if number.denominator != 1:
        raise ValueError(f"size {value!r} is not a whole number of bytes")
    return int(number)


def format_size(nbytes: float, *, exact: bool = True) -> str:
    """Return a binary size label with 3 significant digits: ``64MiB``, ``29.7MiB``, ``512KiB``.

    Every command, plot and export writes sizes this way.  ``exact=True`` is for
    settings, which must read back as the same number of bytes: when the 3-digit label
    would not, the size is written whole in the largest unit that divides it
    (``3073MiB``).  ``exact=False`` is for measurements and estimates (``89.4GiB``).
    """
    if nbytes < 1024:
        return f"{int(nbytes)}B"
    unit = next(u for u in ("TiB", "GiB", "MiB", "KiB") if nbytes >= _UNITS[u])
    shown = f"{_three_digits(nbytes / _UNITS[unit])}{unit}"
    if not exact or nbytes != int(nbytes) or _reads_back(shown, int(nbytes)):
        return shown
    for smaller in ("GiB", "MiB", "KiB"):
        if _UNITS[smaller] < _UNITS[unit] and int(nbytes) % _UNITS[smaller] == 0:
            return f"{int(nbytes) // _UNITS[smaller]}{smaller}"
    return shown


def _reads_back(label: str, nbytes: int) -> bool:
    try:
        return parse_size(label) == nbytes
    except ValueError:  # 1.18MiB is not a whole number of bytes
        return False


def _three_digits(value: float) -> str:
    """``1.5``, ``29.7``, ``512``: three significant digits, no trailing zeros."""
    decimals = 0 if value >= 99.95 else 1 if value >= 9.995 else 2
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_number(value: float, *, digits: int | None = None, significant: int = 3) -> str:
    """Return a number for a table or a message: ``0.0123``, ``45.6``, ``1234``; ``-`` for NaN.

    Parameters
    ----------
    value
        Any real number (a NumPy scalar or a 0-d array too).
    digits
        Fixed decimals (``1.50`` with ``digits=2``) instead of significant digits.
    significant
        Significant digits; a number with that many digits before the point or more
        is shown whole, never in exponent notation (``1234``, not ``1.23e+03``).
    """
    v = float(value)
    if math.isnan(v):
        return "-"
    if digits is not None:
        return f"{v:.{digits}f}"
    if not math.isfinite(v) or abs(v) >= 10 ** (significant - 1):
        return f"{v:.0f}"
    return f"{v:#.{significant}g}".rstrip(".")


def format_rate(mibps: float, *, significant: int = 3) -> str:
    """Return a throughput in MiB/s as text: ``"123 MiB/s"``, ``"4.56 MiB/s"``."""
    return f"{format_number(mibps, significant=significant)} MiB/s"


def format_duration(seconds: float) -> str:
    """Return a short time with 3 significant digits: ``456 µs``, ``12.3 ms``, ``1.23 s``."""
    if math.isnan(seconds):
        return "-"
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= factor * 0.9995 or unit == "µs":
            return f"{_three_digits(seconds / factor)} {unit}"
    raise AssertionError("unreachable")  # the loop ends on µs


def format_span(seconds: float) -> str:
    """Return a wall time a person plans by: ``450 ms``, ``45 s``, ``3.2 min``, ``1.5 h``."""
    if math.isnan(seconds) or seconds < 10:
        return format_duration(seconds)
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min" if seconds >= 120 else f"{seconds:.0f} s"


def chunk_label(chunks: str | Sequence[int]) -> str:
    """Label a chunk layout as in the results: ``contiguous``, ``auto`` or ``8x128x128``."""
    if isinstance(chunks, str):
        return chunks
    return "x".join(str(int(c)) for c in chunks)


def parse_chunk_label(label: str) -> str | tuple[int, ...]:
    """Invert :func:`chunk_label`."""
    if label in ("contiguous", "auto"):
        return label
    return tuple(int(part) for part in label.split("x"))
