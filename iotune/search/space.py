"""The space an adaptive search walks: the sweep's swept values, never the grid itself.

A point is a mapping of each swept parameter (and ``backend`` with several) to
one of its values.  Whether a point applies, and which trial measures it, comes
from the plan's own rules (:func:`iotune.runner.plan.resolve_point` and
:func:`~iotune.runner.plan.trial_id`) applied to that one point, so a space of
10^6 points costs no more than the handful of points visited.  Points that
resolve to the same effective parameters share a trial; the point shown for it
is the one the grid would show (the coordinates that say what was measured, else
each parameter's first value), so a search's coordinates match a grid's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from iotune.core.errors import NotApplicable, SpecError
from iotune.model.records import Trial
from iotune.model.spec import Sweep
from iotune.runner.plan import resolve_point, trial_id

#: points sampled to estimate how much of a large space applies
ESTIMATE_SAMPLES = 2000


@dataclass(frozen=True)
class Dimension:
    """One searched parameter: its values as stored in results (labels), in spec order."""

    name: str
    values: tuple[Any, ...]
    labels: tuple[Any, ...]

    @property
    def ordered(self) -> bool:
        """Numbers (levels, sizes, counts): the sampler may use their order."""
        return all(isinstance(v, int) and not isinstance(v, bool) for v in self.labels)

    def choices(self) -> tuple[Any, ...]:
        """What the sampler picks from: ranks of sorted numbers, else the labels."""
        return tuple(range(len(self.labels))) if self.ordered else tuple(map(str, self.labels))

    def label_of(self, choice: Any) -> Any:
        if self.ordered:
            return sorted(self.labels)[int(choice)]
        return self.labels[[str(v) for v in self.labels].index(str(choice))]

    def choice_of(self, label: Any) -> Any:
        return sorted(self.labels).index(label) if self.ordered else str(label)


@dataclass(frozen=True)
class Resolved:
    """A point that applies: its trial and the coordinates that show it."""

    coords: dict[str, Any]
    trial: Trial


class Space:
    """The swept parameters of ``sweep`` as a space to sample, lazily.

    A swept ``fidelity`` is not a dimension to sample but the search's rungs
    (:attr:`rungs`, smallest first): a point's coordinates carry the fidelity it
    is measured at, its dimensions say the configuration.
    """

    def __init__(self, sweep: Sweep) -> None:
        self.sweep = sweep
        swept = [p for p in sweep.swept if p.name != "fidelity"]
        rungs = next((p.values for p in sweep.swept if p.name == "fidelity"), ())
        self.rungs: tuple[float, ...] = tuple(sorted(float(v) for v in rungs))
        if self.rungs and self.rungs[-1] != 1:
            raise SpecError(
                "parameters.fidelity",
                f"{list(self.rungs)}: a search climbs to full size and recommends only there; "
                "allowed: shares ending at 1, like [0.125, 0.5, 1]",
            )
        dims = [Dimension(p.name, p.values, p.labels()) for p in swept]
        if len(sweep.backends) > 1:
            dims.insert(0, Dimension("backend", sweep.backends, sweep.backends))
        self.dims = tuple(dims)
        self._fixed = {p.name: p.values[0] for p in sweep.parameters if not p.swept}
        self._workload = sweep.workload.to_dict()
        self._cache: dict[tuple, Resolved | str] = {}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dims)

    @property
    def coord_names(self) -> tuple[str, ...]:
        """A visited point's coordinates: the dimensions, and ``fidelity`` with rungs."""
        return (*self.names, "fidelity") if self.rungs else self.names

    @property
    def top(self) -> float | None:
        """The fidelity a recommendation is measured at (None: no rungs)."""
        return self.rungs[-1] if self.rungs else None

    def at(self, found: Resolved, fidelity: float | None) -> Resolved | str:
        """The same configuration measured at ``fidelity``."""
        return self.resolve({**found.coords, "fidelity": fidelity})

    @property
    def size(self) -> int:
        """Grid points (applicable or not)."""
        return math.prod(len(d.values) for d in self.dims)

    def resolve(self, coords: dict[str, Any]) -> Resolved | str:
        """The trial measuring the point ``coords`` (labels), or why it does not apply."""
        if self.rungs:
            coords = {**coords, "fidelity": float(coords.get("fidelity", self.rungs[-1]))}
        key = tuple(coords[n] for n in self.coord_names)
        if key not in self._cache:
            outcome = self._resolve(coords)
            if isinstance(outcome, Resolved):
                outcome = self._canonical(outcome)
            self._cache[key] = outcome
        return self._cache[key]

    def _resolve(self, coords: dict[str, Any]) -> Resolved | str:
        backend = coords.get("backend", self.sweep.backends[0])
        given = dict(self._fixed)
        for dim in self.dims:
            if dim.name != "backend":
                given[dim.name] = dim.values[dim.labels.index(coords[dim.name])]
        if self.rungs:
            given["fidelity"] = coords["fidelity"]
        outcome = resolve_point(backend, given, self.sweep)
        if isinstance(outcome, NotApplicable):
            return str(outcome)
        effective, _notes = outcome
        tid = trial_id(backend, effective, self._workload)
        return Resolved(dict(coords), Trial.from_effective(tid, backend, effective))

    def _canonical(self, found: Resolved) -> Resolved:
        """The grid's point for the trial: values that say what was measured, else the first."""
        effective = found.trial.effective()
        coords = dict(found.coords)
        for dim in self.dims:
            if dim.name == "backend":
                continue
            shown = _label(dim, effective[dim.name]) if dim.name in effective else None
            if shown in dim.labels:
                coords[dim.name] = shown
            elif dim.name not in effective and "none" in dim.labels:
                coords[dim.name] = "none"
            else:
                coords[dim.name] = dim.labels[0]
        if coords == found.coords:
            return found
        again = self._resolve(coords)
        same = isinstance(again, Resolved) and again.trial.id == found.trial.id
        return Resolved(coords, found.trial) if same else found

    def held_for(self, focus: tuple[str, ...]) -> dict[str, Any] | None:
        """Values that hold still while the ``focus`` parameters are explored first: the
        spec's ``baseline`` (the application's settings), else each parameter's first.
        None without focus; a focused parameter held at one value is not explored."""
        names = set(focus) & set(self.names)
        if not names:
            return None
        held = {}
        for dim in self.dims:
            if dim.name not in names:
                wanted = self.sweep.baseline.get(dim.name)
                held[dim.name] = wanted if wanted in dim.labels else dim.labels[0]
        return held

    def random_point(self, rng: np.random.Generator) -> dict[str, Any]:
        return {d.name: d.labels[int(rng.integers(len(d.labels)))] for d in self.dims}

    def applicable_estimate(self, *, seed: int = 0) -> int:
        """Distinct trials in the space: exact up to 10^4 points, else estimated by sampling.

        A point counts when it applies and is its trial's own point (not one that
        shares another point's effective parameters), as in the grid.
        """
        if self.size <= 10_000:
            return len(
                {
                    r.trial.id
                    for r in map(self.resolve, self.iterate())
                    if isinstance(r, Resolved) and _ok(r)
                }
            )
        rng = np.random.default_rng(seed)
        own = 0
        for _ in range(ESTIMATE_SAMPLES):
            point = self.random_point(rng)
            found = self.resolve(point)
            own += isinstance(found, Resolved) and all(found.coords[n] == point[n] for n in point)
        return max(1, round(self.size * own / ESTIMATE_SAMPLES))

    def iterate(self):
        """Every grid point in grid (C) order; only for small spaces."""
        import itertools

        for combo in itertools.product(*(d.labels for d in self.dims)):
            yield dict(zip(self.names, combo, strict=True))


def _ok(outcome: Resolved | str) -> bool:
    return isinstance(outcome, Resolved)


def _label(dim: Dimension, value: Any) -> Any:
    """An effective value as the dimension labels it (chunk shapes as ``8x128x128``)."""
    if value in dim.values:
        return dim.labels[dim.values.index(value)]
    return value
