"""Expand a sweep into grid points and the unique trials that measure them.

Each grid point is one combination of the swept values.  The backend
resolves it into effective parameters; grid points that resolve to the same
effective parameters (a level swept for codec ``none``) share one trial, and
the others are recorded as not applicable with the reason.  Trial ids hash
the backend, the effective parameters and the workload, so they are stable
across runs and machines.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from typing import Any

from iotune.backends import get_backend
from iotune.core.errors import NotApplicable, UsageError
from iotune.model.parameters import generic as generic_parameters
from iotune.model.records import HINT_VALUES, Trial
from iotune.model.renamed import first_name
from iotune.model.spec import Sweep
from iotune.runner.baselines import baseline_settings

MAX_TRIALS = 10_000


@dataclass(frozen=True)
class GridPoint:
    """One cell of the results cube: swept coordinates and what fills it."""

    coords: dict[str, Any]
    trial_id: str | None
    reason: str = ""

    @property
    def applicable(self) -> bool:
        return not self.reason


@dataclass(frozen=True)
class BaselinePoint:
    """A named baseline (the spec's ``baselines``) on one backend and what measures it.

    ``label`` is its coordinate along the results' ``baseline`` dimension (the name,
    or ``name:backend`` when the sweep has several backends).
    """

    label: str
    name: str
    backend: str
    trial_id: str | None
    reason: str = ""
    effective: dict[str, Any] | None = None

    @property
    def applicable(self) -> bool:
        return not self.reason


@dataclass(frozen=True)
class Plan:
    sweep: Sweep
    dims: tuple[str, ...]
    coords: dict[str, tuple[Any, ...]]
    points: tuple[GridPoint, ...]
    #: the grid's trials, then the baselines' own (those no grid point shares)
    trials: tuple[Trial, ...]
    baselines: tuple[BaselinePoint, ...] = ()


def trial_id(backend: str, params: dict[str, Any], workload: dict[str, Any]) -> str:
    """Stable id of a configuration: a hash of backend, parameters and workload.

    Renamed parameters are hashed under their first names, so a run started
    before a rename resumes, and its results merge, without measuring again.
    """
    hashed = {first_name(name): value for name, value in params.items()}
    blob = json.dumps({"backend": backend, "params": hashed, "workload": workload}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def grid_size(sweep: Sweep) -> int:
    n = len(sweep.backends)
    for param in sweep.swept:
        n *= len(param.values)
    return n


def make_plan(sweep: Sweep, *, yes: bool = False) -> Plan:
    """Expand ``sweep`` into a :class:`Plan`.

    Raises
    ------
    UsageError
        The grid has more than 10,000 points and ``yes`` is false.
    """
    size = grid_size(sweep)
    if size > MAX_TRIALS and not yes:
        raise UsageError(
            f"the grid has {size:,} points (more than {MAX_TRIALS:,}); "
            "shrink the parameter lists or pass --allow-large"
        )
    dims = (("backend",) if len(sweep.backends) > 1 else ()) + tuple(p.name for p in sweep.swept)
    coords = {p.name: p.labels() for p in sweep.swept}
    if len(sweep.backends) > 1:
        coords = {"backend": sweep.backends, **coords}
    fixed = {p.name: p.values[0] for p in sweep.parameters if not p.swept}
    label_of = [dict(zip(p.values, p.labels(), strict=True)) for p in sweep.swept]

    def labels_of(combo: tuple[Any, ...]) -> list[Any]:
        return [table[v] for table, v in zip(label_of, combo, strict=True)]

    resolved = []
    for backend in sweep.backends:
        for combo in itertools.product(*(p.values for p in sweep.swept)):
            given = {**fixed, **dict(zip((p.name for p in sweep.swept), combo, strict=True))}
            point = {p.name: label for p, label in zip(sweep.swept, labels_of(combo), strict=True)}
            if len(sweep.backends) > 1:
                point = {"backend": backend, **point}
            resolved.append((backend, point, resolve_point(backend, given, sweep)))
    points, trials = _merge(resolved, sweep)
    baselines, extra = _baselines(sweep, {t.id for t in trials})
    return Plan(sweep, dims, coords, tuple(points), (*trials, *extra), baselines)


def _baselines(sweep: Sweep, known: set[str]) -> tuple[tuple[BaselinePoint, ...], list[Trial]]:
    """The sweep's named baselines resolved like grid points, and the trials they add."""
    points, extra = [], []
    workload = sweep.workload.to_dict()
    for found in baseline_settings(sweep):
        where = (found.label, found.name, found.backend)
        outcome: Any = NotApplicable(found.reason) if found.given is None else None
        if outcome is None and "chunks" not in get_backend(found.backend).parameters:
            outcome = NotApplicable(f"{found.backend} has no chunks to lay out")
        if outcome is None:
            assert found.given is not None
            outcome = resolve_point(found.backend, found.given, sweep)
        if isinstance(outcome, NotApplicable):
            points.append(BaselinePoint(*where, None, str(outcome)))
            continue
        effective, _notes = outcome
        tid = trial_id(found.backend, effective, workload)
        if tid not in known:
            known.add(tid)
            extra.append(Trial.from_effective(tid, found.backend, effective))
        points.append(BaselinePoint(*where, tid, effective=effective))
    return tuple(points), extra


def resolve_point(backend: str, given: dict[str, Any], sweep: Sweep):
    """A point's effective settings and notes for ``backend``, or why it does not apply."""
    cls = get_backend(backend)
    own = {k: v for k, v in given.items() if k in cls.parameters}
    if "hints" in own:  # swept by name; the backend needs the set's keys and values
        own[HINT_VALUES] = dict(sweep.hints.get(own["hints"], {}))
    runner = generic_parameters()
    generic = {k: v for k, v in given.items() if k in runner}
    foreign = [
        f"{k} does not apply to {backend}"
        for k in given
        if k not in cls.parameters and k not in runner
    ]
    if generic.get("num_workers") and cls.in_memory:
        return NotApplicable(
            f"num_workers {generic['num_workers']} does not apply to {backend}: its data lives "
            "in the trial's process, which loader workers cannot read"
        )
    loader = _loader(sweep)
    if generic.get("num_workers") and loader == "xbatcher":
        return NotApplicable(
            f"num_workers {generic['num_workers']} does not apply to xbatcher's "
            "BatchGenerator: it reads in the trial's process"
        )
    if generic.get("prefetch_factor") is not None and not generic.get("num_workers"):
        generic["prefetch_factor"] = None  # batches read in the trial's process: none in flight
        foreign.append("prefetch_factor does not apply with num_workers 0")
    if generic.get("pin_memory") is not None and loader in ("iotune", "xbatcher"):
        generic["pin_memory"] = None  # no page-locked memory but torch's
        foreign.append(f"pin_memory does not apply to {loader}'s loader (only torch's pins)")
    try:
        effective, notes = cls.resolve(own, sweep.workload_at(given.get("fidelity")))
    except NotApplicable as err:
        return err
    unmetered = getattr(cls, "unmetered", None)  # object-store backends
    why = unmetered(effective, sweep.storage.scheme) if unmetered and sweep.storage else None
    if why:
        return NotApplicable(why)
    return {**effective, **generic}, [*notes, *foreign]


def _loader(sweep: Sweep) -> str:
    """Who reads the sweep's batches: ``torch``, ``iotune`` or ``xbatcher`` (none: empty)."""
    from iotune.specfile.batches import torch_installed

    spec = sweep.read.batches
    if spec is None:
        return ""
    if spec.loader == "auto":
        return "torch" if torch_installed() else "iotune"
    return spec.loader


def _merge(resolved: list, sweep: Sweep) -> tuple[list[GridPoint], list[Trial]]:
    workload = sweep.workload.to_dict()
    by_id: dict[str, list[int]] = {}
    trials: dict[str, Trial] = {}
    for i, (backend, _point, outcome) in enumerate(resolved):
        if isinstance(outcome, NotApplicable):
            continue
        effective, _notes = outcome
        tid = trial_id(backend, effective, workload)
        trials.setdefault(tid, Trial.from_effective(tid, backend, effective))
        by_id.setdefault(tid, []).append(i)
    owner = {
        tid: max(idx, key=lambda i: _match(resolved[i][1], trials[tid].effective()))
        for tid, idx in by_id.items()
    }
    points = []
    for i, (backend, point, outcome) in enumerate(resolved):
        if isinstance(outcome, NotApplicable):
            points.append(GridPoint(point, None, str(outcome)))
            continue
        effective, notes = outcome
        tid = trial_id(backend, effective, workload)
        if owner[tid] == i:
            points.append(GridPoint(point, tid))
        else:
            same = ", ".join(f"{k}={v}" for k, v in resolved[owner[tid]][1].items())
            why = "; ".join(notes) or "same effective parameters"
            points.append(GridPoint(point, None, f"{why}; measured at {same}"))
    return points, [trials[tid] for tid in by_id]


def _match(point: dict[str, Any], effective: dict[str, Any]) -> tuple[int, int]:
    """Prefer the grid point whose coordinates say what was really measured."""
    hits = sum(1 for k, v in point.items() if effective.get(k) == v)
    # a parameter the backend does not have is best shown at its neutral value
    neutral = sum(
        1 for k, v in point.items() if k != "backend" and k not in effective and v in ("none", None)
    )
    return hits, neutral
