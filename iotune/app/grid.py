"""``iotune run``: a sweep's grid walked through a :class:`~iotune.app.session.Session`.

:func:`iotune.app.api.run` is the entry point (it makes the options and calls
:func:`run_with`); :mod:`iotune.app.tuning` does the same for a search.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from iotune.app.forecasting import expect_and_forecast, warn_dominating
from iotune.app.session import Session, with_overrides
from iotune.model.records import TrialResult
from iotune.model.spec import Sweep
from iotune.results.dataset import to_dataset
from iotune.runner.efficiency import efficiency
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
    asked = time.time()
    spans: list[TrialResult] = []
    # the codec probe (numcodecs lets go of the GIL) runs while the workers start
    probe = ThreadPoolExecutor(1)
    expected = probe.submit(expect_and_forecast, plan, farm=_farmed(plan))
    probe.shutdown(wait=False)
    with session.executor() as executor:
        costs, warnings_ = expected.result()
        warn_dominating(warnings_)
        executor.expect(costs)
        # counted in trials, as the plan and the summary count them; a repeat of an
        # interleaved trial moves the bar by its share, the last one completes the trial
        bar = session.progress(
            len(plan.trials), schedule.trials_done(), unit="trial", enabled=progress
        )
        for batch in schedule.batches():
            work = {w.task.trial.id: w for w in batch}
            for result in executor.map([w.task for w in batch]):
                spans.append(result)
                done = work[result.id]
                had = schedule.credit(done.trial_id)  # what the journal held (resumed too)
                complete = schedule.record(done, result)
                if bar is not None:
                    bar.update(schedule.credit(done.trial_id) - had)  # a probe: 0
                    if result.status != "ok":
                        bar.write(f"trial {done.trial_id} failed: {result.error}")
                if complete is not None and on_result is not None:
                    on_result(complete)
        figures = efficiency(asked, spans, executor.workers())
        if figures is not None:
            session.provenance |= figures.provenance()


def _farmed(plan: Plan) -> bool:
    """Whether a farm orders the trials (a serial run keeps the plan's order)."""
    return plan.sweep.execution.executor != "serial"
