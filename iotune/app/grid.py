"""``iotune run``: a sweep's grid walked through a :class:`~iotune.app.session.Session`.

:func:`iotune.app.api.run` is the entry point (it makes the options and calls
:func:`run_with`); :mod:`iotune.app.tuning` does the same for a search.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from iotune.app.session import Session, with_overrides
from iotune.model.records import TrialResult
from iotune.model.spec import Sweep
from iotune.results.dataset import to_dataset
from iotune.runner.options import RunOptions
from iotune.runner.plan import Plan, make_plan
from iotune.runner.schedule import Schedule, collect

if TYPE_CHECKING:
    import xarray as xr


def run_out(name: str) -> Path:
    """Where a grid of the sweep ``name`` writes unless told: ``results/<name>``."""
    return Path("results") / name


def run_with(
    spec: str | Path | Sweep,
    options: RunOptions,
    *,
    progress: bool = True,
    on_result: Callable[[TrialResult], None] | None = None,
) -> xr.Dataset:
    """:func:`run` with its options made (the command line makes them from its arguments)."""
    sweep = with_overrides(spec, options.execution_overrides())
    plan = make_plan(sweep, yes=options.allow_large)
    options = options.with_default_out(run_out(sweep.name))
    session = Session(sweep, options=options, trials=plan.trials)
    with session:
        journal = session.journal
        session.results_from(
            lambda: to_dataset(
                plan, collect(journal), probes=journal.probes, provenance=session.provenance
            )
        )
        _execute(plan, session, progress, on_result)
    assert session.dataset is not None
    return session.dataset


def _execute(
    plan: Plan,
    session: Session,
    progress: bool,
    on_result: Callable[[TrialResult], None] | None,
) -> None:
    schedule = Schedule(plan, session.journal, session.task)
    with session.executor() as executor:
        total = schedule.expected + schedule.probes
        bar = session.progress(total, schedule.started(), unit="task", enabled=progress)
        for batch in schedule.batches():
            work = {w.task.trial.id: w for w in batch}
            for result in executor.map([w.task for w in batch]):
                complete = schedule.record(work[result.id], result)
                if bar is not None:
                    bar.total = max(bar.total, bar.n + 1)  # adaptive repeats may run longer
                    bar.update(1)
                    if result.status != "ok":
                        bar.write(f"trial {work[result.id].trial_id} failed: {result.error}")
                if complete is not None and on_result is not None:
                    on_result(complete)
