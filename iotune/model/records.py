"""The plain data that crosses process boundaries: a trial, its task, its result.

These are what executors ship to workers and rank programs, and what the
journal stores; they hold no behaviour beyond (de)serialising themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from iotune.model.parameters import show as _show
from iotune.model.spec import MeasureSpec, ReadSpec, StorageSpec, Workload

#: the key under which results (``effective``) and trial ids carry a trial's hints
HINT_VALUES = "hint_values"


@dataclass(frozen=True)
class Trial:
    """One configuration to measure."""

    id: str
    backend: str
    params: dict[str, Any]
    #: the MPI-IO hints of the hint set ``params["hints"]`` names, ``{key: value}``
    hints: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_effective(cls, id: str, backend: str, effective: Mapping[str, Any]) -> Trial:
        """A trial from a backend's effective parameters (its ``hint_values`` as ``hints``)."""
        params = {k: v for k, v in effective.items() if k != HINT_VALUES}
        return cls(id, backend, params, dict(effective.get(HINT_VALUES) or {}))

    def effective(self) -> dict[str, Any]:
        """The parameters with the hints, as results store them and ids hash them."""
        if "hints" not in self.params:
            return dict(self.params)
        return {**self.params, HINT_VALUES: dict(self.hints)}

    def label(self) -> str:
        # a hint set shows by its name; its keys and values are in the spec
        shown = {k: v for k, v in self.params.items() if v is not None}
        return " ".join(f"{k}={_show(k, v)}" for k, v in shown.items())


@dataclass(frozen=True)
class EarlyStop:
    """When a search stops repeating a trial: told apart from the leader after ``after`` repeats.

    ``reference`` is the leader's log score per repeat at the trial's fidelity (a
    repeat's score: the weighted mean of each metric's log MiB/s, or log calls a
    second for those in ``per_call``, weights ``weights``).  The trial stops once the
    comparison ``recommend`` ties by (:func:`iotune.measuring.ratio.gap_of`) puts it
    behind the leader beyond noise,
    so a trial that could still tie the leader runs every repeat.  ``after`` is at
    least the repeats that comparison trusts alone (3).
    """

    weights: tuple[tuple[str, float], ...]
    reference: tuple[float, ...]
    after: int = 3
    #: the metrics scored by calls a second (the user's own code), as the search's goal
    per_call: tuple[str, ...] = ()


@dataclass(frozen=True)
class TrialTask:
    """Everything a worker needs to run one trial."""

    trial: Trial
    workload: Workload
    read: ReadSpec
    measure: MeasureSpec
    scratch: str
    #: how MPI trials start ("srun -n {nprocs}"); an execution setting, not part of the id
    launcher: str | None = None
    #: the object store trials write to (their keys mirror ``scratch``); None: local files
    storage: StorageSpec | None = None
    #: a search's rule for stopping a hopeless trial's repeats early; None: never
    early_stop: EarlyStop | None = None
    #: ``(pattern, file)``: the saved answer each of the user's patterns must give
    #: (:mod:`iotune.measuring.reference`); empty without user patterns
    references: tuple[tuple[str, str], ...] = ()


@dataclass
class TrialResult:
    """Measurements of one trial; JSON-friendly for the journal."""

    id: str
    status: str  # ok | failed
    error: str = ""
    write: list[dict[str, float]] = field(default_factory=list)
    reads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    file_bytes: int | None = None
    raw_bytes: int = 0
    stored: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0
    ended: float = 0.0
    #: a failed library kept files open: the worker process must be replaced
    poisoned: bool = False
    #: why the repeats stopped, when the scheduler decided it (interleaved trials):
    #: fixed, precision, max_repeats or interrupted; empty: decided inside the trial;
    #: stopped_early: the search stopped a hopeless trial after its first repeats
    stop: str = ""
    #: wall time of the trial's work summed over its parts (repeats run one at a time);
    #: 0: one piece of work, from ``started`` to ``ended``
    busy_s: float = 0.0

    @property
    def seconds(self) -> float:
        """What the trial cost in wall time (its writes, reads, launches, repeats)."""
        if self.busy_s:
            return self.busy_s
        return max(0.0, self.ended - self.started) if self.ended else 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrialResult:
        return cls(**data)
