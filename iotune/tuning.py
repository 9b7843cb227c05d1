"""``iotune tune``: an adaptive search measured by the executors, or replayed from a grid.

:func:`iotune.api.tune` is the entry point; this module wires the search
(:mod:`iotune.search`) to the same machinery as a grid: the output lock, the
journal (append + fsync per trial, ``--resume``), the scratch directory, the
executors and signal handling, plus the search's own log of asked trials.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.console import search_text  # noqa: F401 - iotune.api's, with tune
from iotune.errors import UsageError
from iotune.executors import make_executor
from iotune.model.records import Trial, TrialResult, TrialTask
from iotune.model.spec import SearchSpec, Sweep
from iotune.results.dataset import RESULTS_NAME, open_results, save
from iotune.results.objective import parse_objective
from iotune.runner import preflight, provenance
from iotune.runner.journal import DirectoryLock, Journal
from iotune.runner.plan import Plan
from iotune.runner.scratch import make_scratch_root
from iotune.search.log import SEARCH_LOG, SearchLog
from iotune.search.loop import Search
from iotune.search.replay import ReplayMeasurer
from iotune.search.results import search_dataset
from iotune.search.state import Goal
from iotune.spec.overrides import _apply_override, load_with_overrides
from iotune.spec.parse import load_spec_text
from iotune.stopping import stop_on_signals

if TYPE_CHECKING:
    import xarray as xr

JOURNAL_NAME = "journal.jsonl"


def search_overrides(options: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted ``search.*`` overrides from keyword options; None means keep the spec's."""
    return {f"search.{k}": v for k, v in options.items() if v is not None}


def load_search_spec(spec: str | Path | Sweep, overrides: Mapping[str, Any]) -> Sweep:
    """The spec with its ``search`` section (``strategy: auto`` when it has none)."""
    if isinstance(spec, Sweep):
        if overrides:
            raise UsageError("search options with a loaded Sweep: put them in its spec")
        if spec.search is None:
            raise UsageError(f"sweep {spec.name!r} has no search section to tune with")
        return spec
    sweep = load_with_overrides(spec, overrides)
    if sweep.search is None:  # no section: a search with every default
        sweep = load_with_overrides(spec, {"search.strategy": "auto", **overrides})
    return sweep


def grid_sweep(grid: xr.Dataset, overrides: Mapping[str, Any], source: str) -> Sweep:
    """The recorded grid's own spec with the search settings applied."""
    import yaml

    text = str(grid.attrs.get("spec", ""))
    if not text:
        raise UsageError(f"--replay {source}: the results hold no spec to search")
    data = yaml.safe_load(text)
    data.setdefault("search", {})
    for key, value in overrides.items():
        _apply_override(data, key, value, source=source)
    shown = ", ".join(f"{k}={v!r}" for k, v in overrides.items())
    text = f"# replay of {source}: {shown}\n" + yaml.safe_dump(data, sort_keys=False)
    return load_spec_text(text, source=source)


def goal_of(sweep: Sweep, search: SearchSpec) -> Goal:
    """The objective of ``search`` as weights and limits, checked like ``recommend``'s."""
    metrics = ["write", *(f"read:{p}" for p in sweep.read.patterns)]
    text = search.objective or None
    weighted = text is not None and "=" in text
    goal = parse_objective(
        metrics,
        None if weighted else text,
        text if weighted else None,
        max_size=search.max_size,
        max_ratio_loss=search.max_ratio_loss,
    )
    return Goal(goal.weights, goal.limits)


def task_maker(sweep: Sweep, scratch: str) -> Callable[[Trial], TrialTask]:
    def make(trial: Trial) -> TrialTask:
        return TrialTask(
            trial, sweep.workload, sweep.read, sweep.measure, scratch, sweep.execution.launcher
        )

    return make


def replay_outcome(sweep: Sweep, grid: xr.Dataset, *, measurer: ReplayMeasurer | None = None):
    """Run the search of ``sweep`` answered from the recorded ``grid``; its Outcome."""
    assert sweep.search is not None
    search = Search(
        sweep,
        goal=goal_of(sweep, sweep.search),
        measurer=measurer or ReplayMeasurer(grid, seed=sweep.search.seed),
        task=task_maker(sweep, "replay"),
        parallel=sweep.search.parallel or 1,
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

    def measure(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        for result in self.executor.map(tasks):
            self.journal.append(result)
            if self.bar is not None:
                self.bar.update(1)
                if result.status != "ok":
                    self.bar.write(f"trial {result.id} failed: {result.error}")
            if self.on_result is not None:
                self.on_result(result)
            yield result


def run_search(
    sweep: Sweep,
    *,
    out: Path,
    resume: bool,
    overwrite: bool,
    scratch: Path | None,
    progress: bool,
    on_result: Callable[[TrialResult], None] | None,
) -> xr.Dataset:
    """Measure the search of ``sweep`` for real; results in ``out`` (journal, log, results)."""
    assert sweep.search is not None
    if resume and overwrite:
        raise UsageError("--resume and --overwrite contradict each other; choose one")
    empty = Plan(sweep, (), {}, (), ())
    preflight.check(empty, out=out, scratch=scratch, force=True)  # paths; room is per trial
    out.mkdir(parents=True, exist_ok=True)
    with stop_on_signals(), DirectoryLock(out):
        if overwrite:
            for name in (JOURNAL_NAME, RESULTS_NAME, SEARCH_LOG):
                (out / name).unlink(missing_ok=True)
        digest = sweep.digest()
        journal = Journal(out / JOURNAL_NAME, digest=digest, name=sweep.name, resume=resume)
        log = SearchLog(out / SEARCH_LOG, digest=digest, resume=resume)
        root = make_scratch_root(str(scratch) if scratch else None, out)
        prov = provenance.collect(root)
        executor = make_executor(sweep.execution)
        print(f"iotune: {executor.describe()}", file=sys.stderr)
        measurer = ExecutorMeasurer(executor, journal, None, on_result)
        search = Search(
            sweep,
            goal=goal_of(sweep, sweep.search),
            measurer=measurer,
            task=task_maker(sweep, str(root)),
            parallel=_parallel(sweep),
            log=log.append,
            earlier=(log.records, journal.done),
        )
        measurer.bar = _progress(search.out.budget, len(journal.done), progress)
        try:
            search.run()
        except BaseException:  # interrupted (or failing): stop what still runs, now
            executor.abort()
            raise
        else:
            executor.close()
        finally:
            if measurer.bar is not None:
                measurer.bar.close()
            shutil.rmtree(root, ignore_errors=True)
            ds = search_dataset(sweep, search.out, provenance=prov)
            save(ds, out / RESULTS_NAME)
    return ds


def _parallel(sweep: Sweep) -> int:
    assert sweep.search is not None
    if sweep.search.parallel:
        return sweep.search.parallel
    execution = sweep.execution
    return 1 if execution.executor == "serial" else execution.workers or 2


def _progress(total: int, initial: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit="trial", file=sys.stderr, dynamic_ncols=True)


def open_grid(path: str | Path) -> xr.Dataset:
    """A recorded grid to replay (``iotune run`` results)."""
    ds = open_results(path)
    if str(ds.attrs.get("layout", "")) == "sparse":
        raise UsageError(f"--replay {path}: these are a search's results, not a grid")
    return ds


def tune(
    spec: str | Path | Sweep | None = None,
    *,
    out: str | Path | None = None,
    replay: str | Path | xr.Dataset | None = None,
    strategy: str | None = None,
    budget: int | str | None = None,
    objective: str | None = None,
    max_size: str | None = None,
    seed: int | None = None,
    parallel: int | None = None,
    resume: bool = False,
    overwrite: bool = False,
    scratch: str | Path | None = None,
    progress: bool = True,
    on_result: Callable[[TrialResult], None] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Search a spec's space adaptively; return the sparse results (also ``OUT/results.nc``).

    Parameters
    ----------
    spec
        A spec file (its ``search`` section; ``strategy: auto`` without one) or a
        loaded Sweep with a search section.  With ``replay``: default the grid's own spec.
    out
        Output directory; default ``results/<name>-tune``.  A replay writes only
        ``results.nc`` there, and nothing when ``out`` is None.
    replay
        A recorded grid (results file or Dataset): trials are answered from its
        repeats instead of the file system (see :mod:`iotune.search.replay`).
    strategy, budget, objective, max_size, seed, parallel
        Override the ``search`` section (``budget``: trials or ``"25%"``;
        ``objective``: ``read:timeseries`` or ``write=1,read:spatial=2``).
    resume, overwrite, scratch, progress, on_result
        As for :func:`run`; a resumed search measures no trial twice.
    overrides
        Further dotted overrides of the spec (``{"execution.workers": 2}``).

    Raises
    ------
    SpecError
        A bad search setting (the message names the field, e.g. ``search.budget``).
    UsageError
        Before anything is measured: bad paths, or options that contradict.
    """
    options = {"strategy": strategy, "budget": budget, "objective": objective}
    options |= {"max_size": max_size, "seed": seed, "parallel": parallel}
    overrides = {**(overrides or {}), **search_overrides(options)}
    if replay is not None:
        grid = replay if not isinstance(replay, str | Path) else open_grid(replay)
        name = str(replay) if isinstance(replay, str | Path) else "grid"
        sweep = (
            load_search_spec(spec, overrides)
            if spec is not None
            else grid_sweep(grid, overrides, name)
        )
        ds = replay_search(sweep, grid)
        if out is not None:
            save(ds, Path(out) / RESULTS_NAME)
        return ds
    if spec is None:
        raise UsageError("give a spec to tune, or --replay GRID.nc")
    sweep = load_search_spec(spec, overrides)
    target = Path(out) if out is not None else Path("results") / f"{sweep.name}-tune"
    return run_search(
        sweep,
        out=target,
        resume=resume,
        overwrite=overwrite,
        scratch=Path(scratch) if scratch else None,
        progress=progress,
        on_result=on_result,
    )
