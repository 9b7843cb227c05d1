"""``iotune tune``: an adaptive search measured by the executors, or replayed from a grid.

:func:`iotune.app.api.tune` is the entry point (it makes the options and calls
:func:`tune_with`); this module wires the search
(:mod:`iotune.search`) to the same machinery as a grid, a
:class:`~iotune.app.session.Session` (checks, output lock, journal, scratch,
executor, signals, device limit, results), plus the search's own log of asked
trials.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.app.session import Session, with_overrides
from iotune.core.errors import UsageError
from iotune.core.extras import require
from iotune.model.objective import Objective
from iotune.model.records import Trial, TrialResult, TrialTask
from iotune.model.spec import SearchSpec, Sweep
from iotune.results.dataset import RESULTS_NAME, open_results, save
from iotune.runner.journal import Journal
from iotune.runner.options import RunOptions
from iotune.runner.plan import MAX_TRIALS, grid_size
from iotune.search.log import SEARCH_LOG, SearchLog
from iotune.search.loop import Search
from iotune.search.prior import Prior, load_priors
from iotune.search.replay import ReplayMeasurer
from iotune.search.results import search_dataset
from iotune.search.space import ESTIMATE_SAMPLES, Resolved, Space
from iotune.search.state import Goal
from iotune.specfile.overrides import apply_override
from iotune.specfile.parse import load_spec_text

if TYPE_CHECKING:
    import xarray as xr

logger = logging.getLogger(__name__)


def search_overrides(
    *,
    strategy: str | None = None,
    budget: int | str | None = None,
    objective: str | None = None,
    weights: str | None = None,
    max_size: str | None = None,
    max_ratio_loss: str | float | None = None,
    max_error: str | float | None = None,
    min_digits: str | int | None = None,
    max_tie_loss: str | float | None = None,
    readers: str | None = None,
    seed: int | None = None,
    parallel: int | None = None,
    prior: Sequence[str | Path] | None = None,
) -> dict[str, Any]:
    """Dotted ``search.*`` overrides from the options of ``tune``; None keeps the spec's.

    The objective options of a search override its ``search`` section, where the
    spec checks them (naming ``search.max_size`` and so on) and records them; the
    search's :class:`~iotune.search.state.Goal` is made from the section's
    :class:`~iotune.model.objective.Objective` (:func:`goal_of`).

    Raises
    ------
    UsageError
        ``objective`` and ``weights`` together.
    """
    if objective is not None and weights is not None:
        raise UsageError("--objective and --weights: give one, not both")
    if isinstance(budget, str) and budget.isdigit():
        budget = int(budget)  # trials, as the command line gives them
    options: dict[str, Any] = {"strategy": strategy, "budget": budget}
    options["objective"] = objective or weights
    options |= {"max_size": max_size, "max_ratio_loss": _number(max_ratio_loss)}
    options |= {"max_error": _number(max_error), "min_digits": _number(min_digits)}
    options |= {"max_tie_loss": _number(max_tie_loss), "readers": readers}
    options |= {"seed": seed, "parallel": parallel}
    options["prior"] = None if prior is None else [str(p) for p in prior]
    return {f"search.{k}": v for k, v in options.items() if v is not None}


def load_search_spec(spec: str | Path | Sweep, overrides: Mapping[str, Any]) -> Sweep:
    """The spec with its ``search`` section (``strategy: auto`` when it has none)."""
    sweep = with_overrides(spec, overrides)
    if sweep.search is None:  # no section: a search with every default
        sweep = with_overrides(spec, {"search.strategy": "auto", **overrides})
    return sweep


def grid_sweep(grid: xr.Dataset, overrides: Mapping[str, Any], source: str) -> Sweep:
    """The recorded grid's own spec with the search settings applied."""
    import yaml

    text = str(grid.attrs.get("spec", ""))
    if not text:
        raise UsageError(f"--replay {source}: the results hold no spec to search")
    data = yaml.safe_load(text)
    data.setdefault("search", {})
    workload = grid.iotune.workload
    if workload.get("field") == "file":  # a replay reads no data: the grid says what it was
        data["workload"] = {k: v for k, v in workload.items() if v is not None}
    for key, value in overrides.items():
        apply_override(data, key, value, source=source)
    shown = ", ".join(f"{k}={v!r}" for k, v in overrides.items())
    text = f"# replay of {source}: {shown}\n" + yaml.safe_dump(data, sort_keys=False)
    # the user's code is found where the spec that measured the grid was, not beside it
    found = json.loads(str(grid.attrs.get("provenance_user_patterns", "[]")))
    base = Path(found[0]["base"]) if found and found[0].get("base") else None
    return load_spec_text(text, source=source, base=base, recorded=True)


def goal_of(sweep: Sweep, search: SearchSpec) -> Goal:
    """The search's goal: the :class:`Objective` of ``search``, resolved like ``recommend``'s."""
    metrics = ["write", *(f"read:{p}" for p in sweep.read.patterns)]
    own = [p for p in sweep.read.patterns if sweep.read.user_pattern(p) is not None]
    objective = Objective.from_search(search).resolved(metrics, own=own)
    calls = [f"read:{p}" for p in own]  # ranked by calls a second, as recommend ranks them
    return Goal.of(objective, full_bytes=sweep.workload.nbytes, per_call=calls)


def task_maker(sweep: Sweep, scratch: str) -> Callable[[Trial], TrialTask]:
    """Tasks for a replayed search (no scratch: nothing is written)."""

    def make(trial: Trial) -> TrialTask:
        return TrialTask(
            trial,
            sweep.workload_at(trial.params.get("fidelity")),
            sweep.read,
            sweep.measure,
            scratch,
            sweep.execution.launcher,
        )

    return make


def replay_outcome(
    sweep: Sweep,
    grid: xr.Dataset,
    *,
    measurer: ReplayMeasurer | None = None,
    prior: Sequence[Prior] | None = None,
):
    """Run the search of ``sweep`` answered from the recorded ``grid``; its Outcome.

    ``prior`` (loaded earlier results) replaces those the spec's ``search.prior`` names.

    Raises
    ------
    UsageError
        A time budget on a grid that recorded no trial times.
    """
    assert sweep.search is not None
    if sweep.search.budget_seconds is not None and "trial_s" not in grid:
        raise UsageError(
            "search.budget: a time budget needs the grid's trial times (trial_s), which "
            "this grid does not record; allowed: a budget in trials or a share like 25%"
        )
    goal = goal_of(sweep, sweep.search)
    search = Search(
        sweep,
        goal=goal,
        measurer=measurer or ReplayMeasurer(grid, seed=sweep.search.seed),
        task=task_maker(sweep, "replay"),
        parallel=sweep.search.parallel or 1,
        prior=prior if prior is not None else load_priors(sweep.search.prior, sweep, goal.weights),
    )
    return search.run()


def replay_search(sweep: Sweep, grid: xr.Dataset) -> xr.Dataset:
    """A search over ``sweep`` answered from the recorded ``grid``; its results Dataset."""
    outcome = replay_outcome(sweep, grid)
    prov = {"replay_of": str(grid.attrs.get("name", "")), **_provenance(grid)}
    return search_dataset(sweep, outcome, provenance=prov)


def _provenance(grid: xr.Dataset) -> dict[str, str]:
    return {k: str(v) for k, v in grid.iotune.provenance.items()}


class ExecutorMeasurer:
    """Trials through an executor, each result journaled before the search hears of it."""

    def __init__(self, executor: Any, journal: Journal, bar: Any, on_result: Any) -> None:
        self.executor, self.journal, self.bar, self.on_result = executor, journal, bar, on_result
        self.timed = False  # the bar counts seconds (a time budget), not trials
        self.rungs = False  # a trial at fidelity f counts as f of a full-size trial
        self.shown, self.total = 0, 0.0

    def _advance(self, amount: float) -> None:
        """Move the bar by whole units as their fractions add up (cheap trials take 0.1 s).

        Never past the budget: a time budget may be overrun by the trials of one batch
        (:mod:`iotune.search.budget`), and a bar past its total loses the total (``21/?``).
        """
        self.total += amount
        shown = int(self.total) if not self.bar.total else min(int(self.total), self.bar.total)
        self.bar.update(shown - self.shown)
        self.shown = shown

    def cost(self, params: Mapping[str, Any]) -> float:
        """A trial's share of a full-size trial in a trial budget (:mod:`iotune.search.budget`)."""
        return float(params.get("fidelity", 1.0)) if self.rungs else 1.0

    def measure(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        costs = {t.trial.id: self.cost(t.trial.params) for t in tasks}
        for result in self.executor.map(tasks):
            self.journal.append(result)
            if self.bar is not None:
                self._advance(result.seconds if self.timed else costs.get(result.id, 1.0))
                if result.status != "ok":
                    self.bar.write(f"trial {result.id} failed: {result.error}")
            if self.on_result is not None:
                self.on_result(result)
            yield result


def search_trials(space: Space) -> tuple[Trial, ...]:
    """The trials a search of ``space`` may ask for, for the room check on scratch.

    Every trial of a space of up to 10,000 points; in a larger one, those of its
    extremes (each backend with every numeric parameter, such as ``concurrency``
    or ``nprocs``, at its largest) and of a fixed sample of points.
    """
    if space.size <= 10_000:
        points = list(space.iterate())
    else:
        rng = np.random.default_rng(0)
        points = [space.random_point(rng) for _ in range(ESTIMATE_SAMPLES)]
        backends = next((d.labels for d in space.dims if d.name == "backend"), (None,))
        for backend in backends:
            top = {d.name: max(d.labels) if d.ordered else d.labels[0] for d in space.dims}
            points.append(top if backend is None else top | {"backend": backend})
    found = (space.resolve(p) for p in points)
    return tuple({r.trial.id: r.trial for r in found if isinstance(r, Resolved)}.values())


def run_search(
    sweep: Sweep,
    options: RunOptions,
    *,
    progress: bool,
    on_result: Callable[[TrialResult], None] | None,
) -> xr.Dataset:
    """Measure the search of ``sweep`` for real; results in ``options.out`` (journal, log)."""
    assert sweep.search is not None and options.out is not None
    goal = goal_of(sweep, sweep.search)
    priors = load_priors(sweep.search.prior, sweep, goal.weights)  # refused before anything runs
    out, resume = options.out, options.resume
    session = Session(
        sweep,
        options=options,
        trials=() if options.force else search_trials(Space(sweep)),
        discard=(SEARCH_LOG,),
    )
    with session:
        journal = session.journal
        log = SearchLog(out / SEARCH_LOG, digest=sweep.digest(), resume=resume)
        with session.executor() as executor:
            measurer = ExecutorMeasurer(executor, journal, None, on_result)
            search = Search(
                sweep,
                goal=goal,
                measurer=measurer,
                task=session.task,
                parallel=_parallel(sweep),
                log=log.append,
                earlier=(log.records, journal.done),
                prior=priors,
            )
            session.results_from(
                lambda: search_dataset(sweep, search.out, provenance=session.provenance)
            )
            measurer.timed = search.out.limit.seconds is not None
            measurer.rungs = bool(search.space.rungs)
            if measurer.timed:
                done = sum(r.seconds for r in journal.done.values())
            else:  # full-size trials: what the log's finished trials cost
                done = sum(
                    measurer.cost(r["coords"]) for r in log.records if r["id"] in journal.done
                )
            unit = "s" if measurer.timed else "trial"
            total = round(search.out.budget)
            start = min(int(done), total)
            measurer.shown, measurer.total = start, float(done)
            measurer.bar = session.progress(total, start, unit=unit, enabled=progress)
            search.run()
    assert session.dataset is not None
    return session.dataset


def _parallel(sweep: Sweep) -> int:
    assert sweep.search is not None
    if sweep.search.parallel:
        return sweep.search.parallel
    execution = sweep.execution
    return 1 if execution.executor == "serial" else execution.workers or 2


def _number(value: str | float | None) -> str | float | None:
    """``"0.1"`` as the command line gives it, as a number; anything else as given (checked)."""
    try:
        number = float(value) if isinstance(value, str) else value
    except ValueError:
        return value  # the spec's check names the search field and what is allowed
    # "3" from the command line is the integer the spec's check takes
    return int(number) if isinstance(number, float) and number.is_integer() else number


def open_grid(path: str | Path) -> xr.Dataset:
    """A recorded grid to replay (``iotune run`` results)."""
    ds = open_results(path)
    if str(ds.attrs.get("layout", "")) == "sparse":
        raise UsageError(f"--replay {path}: these are a search's results, not a grid")
    return ds


def tune_with(
    spec: str | Path | Sweep | None,
    options: RunOptions,
    *,
    search: Mapping[str, Any],
    replay: str | Path | xr.Dataset | None = None,
    progress: bool = True,
    on_result: Callable[[TrialResult], None] | None = None,
) -> xr.Dataset:
    """:func:`iotune.app.api.tune` with its options made: run options, spec overrides.

    ``search`` holds the dotted overrides of the spec (:func:`search_overrides`,
    and any others); the execution options of ``options`` are applied on top.
    A replay writes ``results.nc`` into ``options.out`` only when one is given.
    """
    require("optuna", extra="search", feature="iotune tune")
    overrides = {**search, **options.execution_overrides()}
    if replay is not None:
        grid = replay if not isinstance(replay, str | Path) else open_grid(replay)
        name = str(replay) if isinstance(replay, str | Path) else "grid"
        sweep = (
            load_search_spec(spec, overrides)
            if spec is not None
            else grid_sweep(grid, overrides, name)
        )
        ds = replay_search(sweep, grid)
        if options.out is not None:
            save(ds, options.out / RESULTS_NAME)
        return ds
    if spec is None:
        raise UsageError("give a spec to tune, or --replay GRID.nc")
    sweep = load_search_spec(spec, overrides)
    assert sweep.search is not None
    size = grid_size(sweep)
    if sweep.search.strategy == "grid" and size > MAX_TRIALS and not options.allow_large:
        raise UsageError(
            f"search.strategy: grid walks all {size:,} points (more than {MAX_TRIALS:,}); "
            "choose another strategy, shrink the parameter lists or pass --allow-large"
        )
    if sweep.baselines:  # extra points beside a grid; a search visits its space only
        shown = ", ".join(sweep.baselines)
        logger.info("baselines (%s) are measured by iotune run, not by a search", shown)
    options = options.with_default_out(tune_out(sweep.name))
    return run_search(sweep, options, progress=progress, on_result=on_result)


def tune_out(name: str) -> Path:
    """Where a search of the sweep ``name`` writes unless told: ``results/<name>-tune``."""
    return Path("results") / f"{name}-tune"
