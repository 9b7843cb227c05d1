"""The cheapest configuration that keeps a simulated accelerator busy (``read.batches.step``).

With a step per batch, more samples per second than the accelerator consumes buy
nothing: what matters is that it waits little.  MLPerf Storage asks for an
accelerator utilisation of at least 90 %; of the configurations that reach it,
the one with the fewest loader workers, then the smallest file, costs least.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from iotune.results.batches import batches_of, loader_figures

if TYPE_CHECKING:
    import xarray as xr

    from iotune.results.objective import Candidate

#: MLPerf Storage's least accelerator utilisation for a passing run
TARGET = 0.9
METRIC = "read:batches"


def cheapest_busy(
    ds: xr.Dataset, candidates: Sequence[Candidate], weights: Mapping[str, float]
) -> tuple[Candidate | None, str]:
    """The cheapest candidate with utilisation >= ``TARGET``, and the line that says so.

    ``(None, "")`` when the sweep has no step or the objective is not ``read:batches``;
    ``(None, why)`` when no candidate keeps the accelerator busy enough.
    """
    step = float((batches_of(ds) or {}).get("step") or 0)
    if not step or METRIC not in weights:
        return None, ""
    busy = {id(c): loader_figures(ds, c.coords).get("utilisation", math.nan) for c in candidates}
    keep = [c for c in candidates if busy[id(c)] >= TARGET]
    if not keep:
        best = max((u for u in busy.values() if not math.isnan(u)), default=math.nan)
        return None, (
            f"no configuration keeps the accelerator {TARGET:.0%} busy at a step of "
            f"{step * 1000:g} ms (best {best:.0%}): the fastest is named"
        )
    pick = min(keep, key=lambda c: (int(c.settings.get("num_workers") or 0), c.file_bytes))
    return pick, (
        f"cheapest configuration keeping the accelerator >= {TARGET:.0%} busy at a step of "
        f"{step * 1000:g} ms (fewest num_workers, then smallest file): "
        f"utilisation {busy[id(pick)]:.0%}"
    )
