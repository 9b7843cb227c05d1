"""What notebooks and the CLI call."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.app.session import Session, with_overrides
from iotune.app.tuning import search_text, tune  # adaptive search: iotune tune
from iotune.core.errors import UsageError
from iotune.model.records import TrialResult
from iotune.model.spec import Sweep
from iotune.results.dataset import open_results, save, to_dataset
from iotune.runner.calibrate_store import calibrate_storage, clean_storage
from iotune.runner.plan import Plan, grid_size, make_plan
from iotune.runner.schedule import Schedule, collect
from iotune.runner.scratch import remove_leftovers, remove_stale_lock
from iotune.specfile.overrides import execution_overrides, load_with_overrides
from iotune.views.console import (
    backends_info,
    backends_text,
    best_text,
    counts_text,
    plan_text,
    results_text,
    store_limit_text,
)

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "any_failed",
    "backends_info",
    "backends_text",
    "best_text",
    "calibrate",
    "calibrate_storage",
    "clean",
    "counts_text",
    "execution_overrides",
    "from_darshan",
    "grid_size",
    "load_spec",
    "make_plan",
    "merge_files",
    "notebook",
    "open_results",
    "plan_text",
    "plot_notes",
    "recommend",
    "recommendation_text",
    "results_text",
    "run",
    "run_warnings",
    "save_plots",
    "search_text",
    "store_limit_text",
    "tune",
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
        Before anything is created: ``out`` is a file or cannot be written,
        ``scratch`` is not a writable directory, or scratch lacks room.
    """
    execution = execution_overrides(
        executor=executor, workers=workers, scheduler=scheduler, per_host=per_host
    )
    sweep = with_overrides(spec, execution)
    plan = make_plan(sweep, yes=yes)
    out = Path(out) if out is not None else Path("results") / sweep.name
    session = Session(
        sweep,
        out=out,
        trials=plan.trials,
        resume=resume,
        overwrite=overwrite,
        scratch=scratch,
        force=force,
    )
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


def run_warnings(ds: xr.Dataset) -> list[str]:
    """What a finished run should warn about: striping asked for but not applied."""
    stripes = str(ds.attrs.get("stripe_settings", ""))
    return [stripes] if "not applied" in stripes else []


def plot_notes(results: str | Path | xr.Dataset) -> list[str]:
    """Why a standard figure was left out (nothing to draw, no calibration)."""
    from iotune.plot import notes

    ds = open_results(results) if isinstance(results, str | Path) else results
    return notes(ds)


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
) -> Any:
    """:func:`iotune.analysis.recommend.recommend`, imported when used (it needs xarray)."""
    from iotune.analysis.recommend import recommend as best_settings

    return best_settings(
        results,
        objective=objective,
        weights=weights,
        max_size=max_size,
        max_ratio_loss=max_ratio_loss,
        max_error=max_error,
        min_digits=min_digits,
        variable=variable,
        alpha=alpha,
    )


def clean(
    out: str | Path | None = None,
    scratch: str | Path | None = None,
    *,
    storage: str | None = None,
    endpoint: str | None = None,
    region: str | None = None,
) -> list[str]:
    """Remove what runs killed outright (SIGKILL, a dead node) left behind; one line each.

    Only ``iotune-scratch-*`` directories in ``out`` and ``scratch``, and areas
    below ``storage``'s prefix (``s3://bucket/prefix``), whose owner mark names a
    process of this host that is gone, and ``out``'s lock file if no process
    holds it; those left alone (another host's, a running sweep's) say why.
    """
    if out is None and scratch is None and storage is None:
        raise UsageError("clean: give OUT, --scratch DIR or --storage URL")
    places = {o: Path(p) for o, p in (("OUT", out), ("--scratch", scratch)) if p is not None}
    for option, place in places.items():
        if not place.is_dir():
            raise UsageError(f"{option} {place}: not an existing directory")
    lines = []
    for place in dict.fromkeys(p.resolve() for p in places.values()):
        lines += remove_leftovers(place, report_kept=True)
    if storage is not None:
        lines += clean_storage(storage, endpoint=endpoint, region=region)
    lock = remove_stale_lock(Path(out)) if out is not None else None
    return [*lines, lock] if lock else lines


def recommendation_text(rec: Any, *, fmt: str = "text") -> str:
    """A recommendation as the report a person reads (``text``) or as ``json``."""
    from iotune.analysis import report

    return report.render_json(rec) if fmt == "json" else report.render_text(rec)


def calibrate(
    scratch: str | Path, *, size: str, block: str, repeats: int, fmt: str = "text"
) -> str:
    """Measure the file system's limit, remember it, and say what was found (text or json)."""
    import json

    from iotune.runner.calibrate import cache_path, format_limit
    from iotune.runner.calibrate import calibrate as measure_limit

    limit = measure_limit(scratch, size=size, block=block, repeats=repeats)
    if fmt == "json":
        return json.dumps(limit, indent=2)
    saved = f"saved to {cache_path()} (key {limit['key']}); sweeps on this file system record it"
    return f"{format_limit(limit)}\n{saved}"


def merge_files(results: list[Path], *, out: Path) -> xr.Dataset:
    """Merge results of sweeps of one workload into the file ``out`` (``.nc``)."""
    from iotune.results.merge import merge

    if Path(out).suffix != ".nc":
        raise UsageError(f"-o {out}: the merged results file must end in .nc")
    ds = merge(results)
    save(ds, Path(out))
    return ds


def notebook(
    path: str | Path,
    parameters: list[tuple[str, str]],
    *,
    out: str | Path | None = None,
    kernel: str | None = None,
) -> Path:
    """Run a parameterised notebook with papermill; ``parameters`` are YAML literals."""
    from iotune.app.notebook import parse_parameters, run_notebook

    params = parse_parameters(parameters)
    return run_notebook(path, parameters=params, out=out, kernel=kernel)


def from_darshan(
    path: str | Path, *, trial_size: str | int = "4GiB", all_files: bool = False
) -> Any:
    """Read a Darshan log: its summary, diagnosis and a spec reproducing the application.

    Parameters
    ----------
    path
        A Darshan log, read in a child process (a crash there is a ``DarshanError``).
    trial_size
        Largest volume a trial of the generated spec moves (at least one request per rank).
    all_files
        Also summarise the interpreter's and libraries' files, after the data files.

    Returns
    -------
    iotune.darshan_.study.Study
        ``text()``, ``spec`` (``None`` with a ``reason``), ``groups``, ``findings``, ``left_out``.

    Raises
    ------
    DarshanError
        Not a readable Darshan log (the message says why), or the library crashed or hung.
    UsageError
        A trial size that is not a size.
    """
    from iotune.backends import get_backend
    from iotune.core.units import parse_size
    from iotune.darshan_.study import study

    try:
        nbytes = parse_size(trial_size)
    except ValueError as err:
        raise UsageError(f"--trial-size {trial_size}: {err}") from err
    if nbytes < 1:
        raise UsageError(f"--trial-size {trial_size}: must be at least 1 byte")
    parallel, _why = get_backend("h5py").parallel_support()
    return study(path, budget=nbytes, parallel_h5py=parallel, all_files=all_files)


def write_darshan_spec(found: Any, path: str | Path | None = None) -> Path:
    """Write the spec of :func:`from_darshan` (default ``sweeps/<its name>.yaml``), validated.

    Raises
    ------
    DarshanError
        The log had nothing to reproduce (``found.reason``).
    SpecError
        The generated spec does not validate (a bug; the message names the field).
    """
    from iotune.specfile.parse import load_spec_text

    text = found.spec_text()
    target = Path(path) if path is not None else Path("sweeps") / f"{found.spec['name']}.yaml"
    load_spec_text(text, source=str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target
