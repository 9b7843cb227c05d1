"""Points a stopped run left short of their repeats: status ``partial``.

A run stopped between interleaved rounds (Ctrl-C, ``scancel``) keeps the repeats
each trial had; a point with fewer successful repeats than the spec asks for is
``partial``, its ``error`` says how many (``1 of 3 repeats (the run was stopped)``,
:func:`iotune.results.dataset.partial_reason`).  Its medians are shown, flagged;
intervals need two repeats or more.  A ranking takes the complete (``ok``) points
and falls back on the partial ones only when no point is complete, and says so
(:func:`note`).  ``iotune run ... --resume`` measures the missing repeats and
turns them ``ok``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import xarray as xr

#: the status of a point with fewer repeats than asked
PARTIAL = "partial"
RESUME = "iotune run SPEC -o OUT --resume measures the missing repeats"


def usable(status: np.ndarray) -> np.ndarray:
    """Which points a ranking takes: the ``ok`` ones, else (none is) the ``partial`` ones."""
    ok = status == "ok"
    return ok if ok.any() else status == PARTIAL


def note(ds: xr.Dataset) -> str:
    """What a recommendation says about partial points; empty when there are none."""
    if "status" not in ds:
        return ""
    status = ds["status"].values.astype(str).ravel()
    short = int((status == PARTIAL).sum())
    if not short:
        return ""
    errors = ds["error"].values.astype(str).ravel()[status == PARTIAL] if "error" in ds else []
    how = sorted({str(e).split(" (")[0] for e in errors if e})
    said = f" ({', '.join(how)})" if how else ""
    if not (status == "ok").any():
        return (
            f"only partial points: the run was stopped before any point had its repeats"
            f"{said}; the pick is from them, without intervals ({RESUME})"
        )
    points = "point" if short == 1 else "points"
    return (
        f"{short} partial {points}{said}, the run was stopped: left out of the ranking ({RESUME})"
    )
