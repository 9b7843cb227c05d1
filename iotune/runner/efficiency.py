"""How well a run kept its workers busy: the losses of a task farm, measured.

From the moment the executor was asked to start and the span of every task
it ran (each result's ``started`` and ``ended``, taken in the worker):

- **start-up**: executor start to the first task's start (processes started,
  libraries imported, the cluster reached);
- **busy**: the tasks' seconds summed over workers, against workers x the
  wall time after start-up (so start-up is reported, not counted twice);
- **tail**: the time at the end with idle workers, from the moment after
  which the workers were never all busy again to the last task's end.

The figures go into the run's provenance (``efficiency_*``), hence into the
results' attributes, and :func:`iotune.views.console.efficiency_line` prints them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from iotune.model.records import TrialResult


@dataclass(frozen=True)
class Efficiency:
    """A run's use of its workers (seconds are wall-clock)."""

    workers: int
    busy_s: float  # worker-seconds in tasks
    span_s: float  # first task start to last task end
    startup_s: float
    tail_s: float

    @property
    def busy(self) -> float:
        """Busy worker-seconds over workers x wall time after start-up (0 to 1)."""
        room = self.workers * self.span_s
        return min(1.0, self.busy_s / room) if room > 0 else 0.0

    def line(self) -> str:
        """``efficiency: 2 workers busy 91 % of 41.2 s; start-up 3.1 s, tail 2.4 s ...``."""
        noun = "worker" if self.workers == 1 else "workers"
        return (
            f"efficiency: {self.workers} {noun} busy {100 * self.busy:.0f} % of "
            f"{self.span_s:.1f} s; start-up {self.startup_s:.1f} s, "
            f"tail {self.tail_s:.1f} s with idle workers"
        )

    def provenance(self) -> dict[str, str]:
        """The figures as the run's provenance strings (attributes ``provenance_efficiency_*``)."""
        return {
            "efficiency_workers": str(self.workers),
            "efficiency_busy": f"{self.busy:.4f}",
            "efficiency_busy_s": f"{self.busy_s:.3f}",
            "efficiency_span_s": f"{self.span_s:.3f}",
            "efficiency_startup_s": f"{self.startup_s:.3f}",
            "efficiency_tail_s": f"{self.tail_s:.3f}",
        }

    @classmethod
    def from_attrs(cls, attrs: Mapping[str, object]) -> Efficiency | None:
        """The figures a results Dataset's attributes carry; None for a run without them."""
        key = "provenance_efficiency_{}".format
        try:
            return cls(
                int(str(attrs[key("workers")])),
                float(str(attrs[key("busy_s")])),
                float(str(attrs[key("span_s")])),
                float(str(attrs[key("startup_s")])),
                float(str(attrs[key("tail_s")])),
            )
        except KeyError:
            return None


def efficiency(started: float, results: Iterable[TrialResult], workers: int) -> Efficiency | None:
    """The efficiency of tasks run by ``workers`` from ``started`` (a ``time.time()``).

    Returns None when no task ran (a resumed run with nothing left).
    """
    spans = [(r.started, r.ended) for r in results if r.started and r.ended >= r.started]
    if not spans:
        return None
    first = min(s for s, _ in spans)
    last_end = max(e for _, e in spans)
    workers = max(1, workers)
    return Efficiency(
        workers=workers,
        busy_s=sum(e - s for s, e in spans),
        span_s=last_end - first,
        startup_s=max(0.0, first - started),
        tail_s=last_end - _last_full(spans, workers, first),
    )


def _last_full(spans: list[tuple[float, float]], workers: int, first: float) -> float:
    """When the run last stopped having every worker busy (``first`` if it never had).

    A gap between one task's end and the next one's start on a busy farm is
    not the tail: only the drop after which no moment has all workers busy is.
    """
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    running, last = 0, first
    for when, step in events:  # ends sort before starts at the same moment
        if step < 0 and running >= workers:
            last = when
        running += step
    return last
