"""What lossy quantisation may cost in a ranking: the limits, and which points keep to them.

A quantised point carries its error (``max_abs_error``, ``digits_kept``); it is
ranked only when the objective (:class:`iotune.model.objective.Objective`) states
``max_error`` or ``min_digits`` and it keeps to them, so a lossy configuration is
never recommended without a stated limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

#: a quantised trial's error figures, as results store them
ERRORS = ("max_abs_error", "max_rel_error", "digits_kept")


def lossless_or_within(errors: Mapping[str, float], limits: Mapping[str, Any]) -> bool:
    """Whether a point with these quantisation ``errors`` may be ranked under ``limits``."""
    if not errors:  # nothing quantised
        return True
    if "max_error" not in limits and "min_digits" not in limits:
        return False
    return errors.get("max_abs_error", np.inf) <= limits.get("max_error", np.inf) and (
        errors.get("digits_kept", -1) >= limits.get("min_digits", -1)
    )


def errors_of(point: Any) -> dict[str, float]:
    """A quantised point's error figures; empty for a lossless one."""
    if "max_abs_error" not in point or not np.isfinite(float(point["max_abs_error"])):
        return {}
    return {k: float(point[k]) for k in ERRORS}


def errors_of_result(result: Any) -> dict[str, float]:
    """A measured trial's quantisation error (a TrialResult's ``stored``); empty if lossless."""
    stored = result.stored or {}
    return {k: float(stored[k]) for k in ERRORS if k in stored}
