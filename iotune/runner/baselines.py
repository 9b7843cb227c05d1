"""The settings of each named baseline: the grid's default point with a library's layout.

A baseline of the ``baselines`` list is measured as one more trial beside the
grid: every parameter at its value in the spec's ``baseline`` section, else its
first (or only) value, with the chunks of the baseline's layout
(:func:`iotune.runner.layouts.layout`) and, for ``source``, the source file's
codec.  :func:`iotune.runner.plan.make_plan` resolves these settings with the
backend like any grid point, so a baseline whose settings a grid point already
has shares that point's trial.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iotune.core.errors import NotApplicable
from iotune.core.units import chunk_label
from iotune.model import codecs
from iotune.model.spec import Sweep
from iotune.runner.layouts import layout


@dataclass(frozen=True)
class BaselineSettings:
    """A baseline's parameters for one backend, or why it does not apply."""

    name: str
    backend: str
    label: str  # its coordinate along ``baseline``: the name, ``name:backend`` for several
    given: dict[str, Any] | None
    reason: str = ""


def default_point(sweep: Sweep) -> dict[str, Any]:
    """Every parameter at the spec's ``baseline`` value, else at its first value."""
    point = {}
    for param in sweep.parameters:
        labels = param.labels()
        wanted = sweep.baseline.get(param.name)
        index = labels.index(wanted) if wanted in labels else 0
        point[param.name] = param.values[index]
    return point


def baseline_settings(sweep: Sweep) -> list[BaselineSettings]:
    """The settings of every baseline of ``sweep`` on every backend, in spec order."""
    base = default_point(sweep)
    workload = sweep.workload_at(base.get("fidelity"))
    several = len(sweep.backends) > 1
    found = []
    for backend in sweep.backends:
        for name in sweep.baselines:
            label = f"{name}:{backend}" if several else name
            try:
                codec, _notes = codecs.resolve_params(base)
                chunks, codec_params = layout(name, backend, workload, codec)
            except NotApplicable as err:
                found.append(BaselineSettings(name, backend, label, None, str(err)))
                continue
            given = {**base, "chunks": chunks, **codec_params}
            found.append(BaselineSettings(name, backend, label, given))
    return found


def layout_text(given: dict[str, Any]) -> str:
    """``chunks=8x32x64 codec=zlib``: what a baseline sets, as the results show it."""
    text = f"chunks={chunk_label(given['chunks'])}"
    return text + (f" codec={given['codec']}" if given.get("codec") else "")
