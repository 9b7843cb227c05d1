"""What lossy quantisation may cost in a ranking: the limits, and which points keep to them.

A quantised point carries its error (``max_abs_error``, ``digits_kept``); it is
ranked only when the caller states ``max_error`` or ``min_digits`` and it keeps
to them, so a lossy configuration is never recommended without a stated limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from iotune.errors import RecommendError


def lossy_limits(max_error: float | str | None, min_digits: int | str | None) -> dict[str, Any]:
    """What quantisation may cost; without either, lossy configurations are never picked."""
    limits: dict[str, Any] = {}
    for name, value, cast in (("max_error", max_error, float), ("min_digits", min_digits, int)):
        if value is None:
            continue
        try:
            number = cast(value)
        except (TypeError, ValueError):
            number = -1
        if number < 0:
            flag = "--" + name.replace("_", "-")
            raise RecommendError(
                f"{flag}: {value!r}; allowed: a number of at least 0 "
                "(the largest absolute error, or the significant digits every value keeps)"
            )
        limits[name] = number
    return limits


def lossless_or_within(cand: Any, limits: Mapping[str, Any]) -> bool:
    if not cand.errors:  # nothing quantised
        return True
    if "max_error" not in limits and "min_digits" not in limits:
        return False
    return cand.errors.get("max_abs_error", np.inf) <= limits.get("max_error", np.inf) and (
        cand.errors.get("digits_kept", -1) >= limits.get("min_digits", -1)
    )


def errors_of(point: Any) -> dict[str, float]:
    """A quantised point's error figures; empty for a lossless one."""
    if "max_abs_error" not in point or not np.isfinite(float(point["max_abs_error"])):
        return {}
    return {k: float(point[k]) for k in ("max_abs_error", "max_rel_error", "digits_kept")}
