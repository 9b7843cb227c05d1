"""What notebooks and the CLI call: load, run, tune, recommend.

The public functions (:func:`run`, :func:`tune`, :func:`recommend`) take their
options as keyword arguments, for people; each makes its options object once
(:class:`~iotune.runner.options.RunOptions`,
:class:`~iotune.model.objective.Objective`) and hands it to the ``*_with``
function below it, which the command line (:mod:`iotune.cli.commands`) calls
with the objects it makes from its arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.app.apply import ApplyReport, apply, apply_with
from iotune.app.darshan import from_darshan, write_darshan_spec
from iotune.app.forecasting import forecast_json, forecast_plan, forecast_text
from iotune.app.grid import run_out, run_with
from iotune.app.tuning import search_overrides, tune_out, tune_with
from iotune.model.objective import Objective
from iotune.model.records import TrialResult
from iotune.model.spec import Sweep
from iotune.results.dataset import open_results
from iotune.runner.calibrate_store import calibrate_storage
from iotune.runner.options import RunOptions
from iotune.runner.plan import grid_size, make_plan
from iotune.specfile.overrides import load_with_overrides
from iotune.views.backends_listing import backends_info, backends_text
from iotune.views.console import (
    best_text,
    counts_text,
    efficiency_line,
    failures_lines,
    nowhere_lines,
    pick_dict,
    pick_lines,
    plan_nowhere,
    plan_text,
    results_text,
    search_text,
    store_limit_text,
)

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "ApplyReport",
    "Objective",
    "RunOptions",
    "any_failed",
    "apply",
    "apply_with",
    "backends_info",
    "backends_text",
    "best_text",
    "calibrate_storage",
    "counts_text",
    "efficiency_line",
    "failures_lines",
    "forecast_json",
    "forecast_plan",
    "forecast_text",
    "from_darshan",
    "grid_size",
    "load_spec",
    "make_plan",
    "nowhere_lines",
    "open_results",
    "pick_dict",
    "pick_lines",
    "plan_nowhere",
    "plan_text",
    "recommend",
    "recommend_with",
    "recommendation_text",
    "results_text",
    "run",
    "run_options",
    "run_out",
    "run_with",
    "save_plots",
    "search_text",
    "store_limit_text",
    "tune",
    "tune_out",
    "tune_with",
    "write_darshan_spec",
]


def load_spec(path: str | Path, *, overrides: Mapping[str, Any] | None = None) -> Sweep:
    """Read and validate a sweep spec, optionally changing it first.

    Parameters
    ----------
    path
        A YAML file in the spec format version 1.
    overrides
        Changes applied to the YAML mapping *before* validation, so a bad value
        is reported with its field like one in the file.  Keys are dotted paths
        (``"parameters.codec"``, ``"workload.shape.time"``,
        ``"execution.executor"``); missing intermediate mappings are created; a
        value of ``None`` removes the key.  Example:
        ``{"parameters.codec": ["zlib", "none"], "workload.shape.time": 16}``.

    Returns
    -------
    Sweep
        The validated sweep; its ``text`` (stored in the results) is the
        effective spec, with a comment naming the file and the overrides.

    Raises
    ------
    SpecError
        The file is missing, malformed or invalid, or an override key does not
        lead through mappings; the message names the field.
    """
    return load_with_overrides(path, overrides or {})


def run(
    spec: str | Path | Sweep,
    *,
    out: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    scratch: str | Path | None = None,
    yes: bool = False,
    force: bool = False,
    executor: str | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    per_host: int | None = None,
    progress: bool = True,
    on_result: Callable[[TrialResult], None] | None = None,
) -> xr.Dataset:
    """Run a sweep and return its results Dataset (also saved as ``OUT/results.nc``).

    Parameters
    ----------
    spec
        A spec file or an already loaded :class:`~iotune.model.spec.Sweep`.
    out
        Output directory; default ``results/<sweep name>``.
    resume
        Continue an interrupted run: finished trials in the journal are kept.
    overwrite
        Discard an earlier run's journal and results in ``out``.
    scratch
        Directory on the file system to measure; iotune works in a fresh
        subdirectory of it and removes only that.  Default: ``out``.
    yes
        Allow grids of more than 10,000 points.
    force
        Run even when the largest trial needs more room than the scratch file
        system has (see :mod:`iotune.runner.preflight`); the paths are checked
        regardless.
    executor, workers, scheduler, per_host
        Override the spec's ``execution`` section (``"serial"`` or ``"dask"``;
        a LocalCluster's workers, a running scheduler's address, storage trials
        at once per host).  Workers, a scheduler or ``per_host`` without an
        executor mean dask.  None keeps the spec's.
    progress
        Show a progress bar.
    on_result
        Called with each finished trial (for notebooks and tests).

    Raises
    ------
    UsageError
        Before anything is created: a bad option (:class:`RunOptions`), ``out``
        is a file or cannot be written, ``scratch`` is not a writable directory,
        or scratch lacks room.
    """
    options = run_options(
        out=out,
        resume=resume,
        overwrite=overwrite,
        scratch=scratch,
        yes=yes,
        force=force,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        per_host=per_host,
    )
    return run_with(spec, options, progress=progress, on_result=on_result)


def run_options(
    *,
    out: str | Path | None,
    resume: bool,
    overwrite: bool,
    scratch: str | Path | None,
    yes: bool,
    force: bool,
    executor: str | None,
    workers: int | None,
    scheduler: str | None,
    per_host: int | None,
) -> RunOptions:
    """The :class:`RunOptions` of :func:`run`'s and :func:`tune`'s keyword arguments."""
    return RunOptions(
        out=None if out is None else Path(out),
        resume=resume,
        overwrite=overwrite,
        scratch=None if scratch is None else Path(scratch),
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        per_host=per_host,
        force=force,
        allow_large=yes,
    )


def tune(
    spec: str | Path | Sweep | None = None,
    *,
    out: str | Path | None = None,
    replay: str | Path | xr.Dataset | None = None,
    strategy: str | None = None,
    budget: int | str | None = None,
    objective: str | None = None,
    weights: str | None = None,
    max_size: str | None = None,
    max_ratio_loss: str | float | None = None,
    max_error: str | float | None = None,
    min_digits: str | int | None = None,
    seed: int | None = None,
    parallel: int | None = None,
    prior: Sequence[str | Path] | None = None,
    resume: bool = False,
    overwrite: bool = False,
    scratch: str | Path | None = None,
    yes: bool = False,
    force: bool = False,
    executor: str | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    per_host: int | None = None,
    progress: bool = True,
    on_result: Callable[[TrialResult], None] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Search a spec's space adaptively; return the sparse results (also ``OUT/results.nc``).

    Parameters
    ----------
    spec
        A spec file (its ``search`` section; ``strategy: auto`` without one) or a
        loaded Sweep.  With ``replay``: default the grid's own spec.
    out
        Output directory; default ``results/<name>-tune``.  A replay writes only
        ``results.nc`` there, and nothing when ``out`` is None.
    replay
        A recorded grid (results file or Dataset): trials are answered from its
        repeats instead of the file system (see :mod:`iotune.search.replay`).
    strategy, budget, seed, parallel
        Override the ``search`` section (``budget``: trials, ``"25%"``, or time on
        the machine, ``"30min"``, ``"2h"``: the sum of the trials' wall times).
    prior
        Earlier results (files or directories) to start from, instead of the
        spec's ``search.prior``: their best configurations are measured first.
    objective, weights, max_size, max_ratio_loss, max_error, min_digits
        The objective, as :func:`iotune.recommend` takes it: one metric
        (``read:timeseries``) or ``weights`` (``write=1,read:spatial=2``), not
        both; the largest stored size, the share of the best compression
        ratio one may give up, and what quantisation may cost (without a limit
        no quantised configuration is picked).  They override the ``search`` section.
    resume, overwrite, scratch, force, progress, on_result
        As for :func:`run`; a resumed search measures no trial twice.
        The room check counts every trial the search may ask for.
    yes
        Allow ``strategy: grid`` (every point, in order) over more than 10,000 points.
    executor, workers, scheduler, per_host
        Override the ``execution`` section, as for :func:`run`.
    overrides
        Further dotted overrides of the spec (``{"execution.launcher": ...}``).

    Raises
    ------
    SpecError
        A bad search setting (the message names the field, e.g. ``search.budget``).
    UsageError
        Before anything is measured: bad options or paths, too little room on
        scratch, or options that contradict.
    """
    search = search_overrides(
        strategy=strategy,
        budget=budget,
        objective=objective,
        weights=weights,
        max_size=max_size,
        max_ratio_loss=max_ratio_loss,
        max_error=max_error,
        min_digits=min_digits,
        seed=seed,
        parallel=parallel,
        prior=prior,
    )
    options = run_options(
        out=out,
        resume=resume,
        overwrite=overwrite,
        scratch=scratch,
        yes=yes,
        force=force,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        per_host=per_host,
    )
    search = {**(overrides or {}), **search}
    return tune_with(
        spec, options, search=search, replay=replay, progress=progress, on_result=on_result
    )


def save_plots(results: str | Path | xr.Dataset, outdir: str | Path | None = None) -> list[Path]:
    """Write every standard figure of a results file as PNG; return the paths."""
    from iotune import plot as plots

    if isinstance(results, str | Path):
        source = Path(results)
        ds = open_results(source)
        default = source if source.is_dir() else source.parent
    else:
        ds, default = results, Path()
    target = Path(outdir) if outdir is not None else default
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, fig in plots.all_figures(ds).items():
        path = target / f"{name}.png"
        fig.savefig(path, dpi=110)
        written.append(path)
    return written


def any_failed(ds: xr.Dataset) -> bool:
    """Whether any trial of a results Dataset failed (the CLI then exits 1)."""
    return bool(ds.iotune.counts().get("failed"))


def recommend(
    results: str | Path | xr.Dataset,
    *,
    objective: str | None = None,
    weights: str | None = None,
    max_size: str | None = None,
    max_ratio_loss: str | None = None,
    max_error: str | None = None,
    min_digits: str | None = None,
    variable: str | None = None,
    alpha: float = 0.05,
    max_tie_loss: str | float | None = None,
) -> Any:
    """:func:`iotune.analysis.recommend.recommend`, imported when used (it needs xarray)."""
    goal = Objective.parse(
        objective,
        weights=weights,
        max_size=max_size,
        max_ratio_loss=max_ratio_loss,
        max_error=max_error,
        min_digits=min_digits,
        alpha=alpha,
        max_tie_loss=max_tie_loss,
    )
    return recommend_with(results, goal, variable=variable)


def recommend_with(
    results: str | Path | xr.Dataset, objective: Objective, *, variable: str | None = None
) -> Any:
    """:func:`iotune.analysis.recommend.recommend_with`: under an Objective made elsewhere."""
    from iotune.analysis.recommend import recommend_with as best_settings

    return best_settings(results, objective, variable=variable)


def recommendation_text(rec: Any, *, fmt: str = "text") -> str:
    """A recommendation as the report a person reads (``text``) or as ``json``."""
    from iotune.analysis import report
    from iotune.views.decision_text import decision_lines

    if fmt == "json":
        return report.render_json(rec)
    return "\n".join([*decision_lines(rec.decision), report.render_text(rec)])
