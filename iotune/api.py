"""What notebooks and the CLI call."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from iotune import provenance
from iotune.errors import UsageError
from iotune.executors import make_executor
from iotune.journal import DirectoryLock, Journal
from iotune.plan import Plan, make_plan
from iotune.results import RESULTS_NAME, open_results, save, to_dataset
from iotune.spec import Sweep, load_spec
from iotune.trial import TrialResult, TrialTask

if TYPE_CHECKING:
    import xarray as xr

JOURNAL_NAME = "journal.jsonl"

__all__ = ["load_spec", "make_plan", "open_results", "run", "save_plots"]


SCRATCH_PREFIX = "iotune-scratch-"
OWNER_FILE = ".iotune-owner"


def _scratch_root(scratch: str | Path | None, out: Path) -> Path:
    """A fresh directory of iotune's own, inside the one the user named (or ``out``).

    Directories left by runs on this host that were killed are removed first;
    iotune only ever deletes directories that carry its owner mark.
    """
    parent = Path(scratch) if scratch is not None else out
    if not parent.is_dir():
        raise UsageError(f"--scratch: {parent} is not an existing directory")
    for old in parent.glob(f"{SCRATCH_PREFIX}*"):
        if _owner_is_dead(old / OWNER_FILE):
            shutil.rmtree(old, ignore_errors=True)
    root = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=parent))
    (root / OWNER_FILE).write_text(f"{socket.gethostname()} {os.getpid()}\n")
    return root


def _owner_is_dead(mark: Path) -> bool:
    try:
        host, pid = mark.read_text().split()
    except (OSError, ValueError):
        return False  # not ours, or not readable: leave it alone
    if host != socket.gethostname():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _start_journal(out: Path, sweep: Sweep, *, resume: bool, overwrite: bool) -> Journal:
    journal = out / JOURNAL_NAME
    if overwrite:
        # only the files a run writes; anything else in the directory is the user's
        journal.unlink(missing_ok=True)
        (out / RESULTS_NAME).unlink(missing_ok=True)
    return Journal(journal, digest=sweep.digest(), name=sweep.name, resume=resume)


def _progress(total: int, initial: int, enabled: bool):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit="trial", file=sys.stderr, dynamic_ncols=True)


def run(
    spec: str | Path | Sweep,
    *,
    out: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    scratch: str | Path | None = None,
    yes: bool = False,
    progress: bool = True,
    on_result: Callable[[TrialResult], None] | None = None,
) -> xr.Dataset:
    """Run a sweep and return its results Dataset (also saved as ``OUT/results.nc``).

    Parameters
    ----------
    spec
        A spec file or an already loaded :class:`~iotune.spec.Sweep`.
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
    progress
        Show a progress bar.
    on_result
        Called with each finished trial (for notebooks and tests).
    """
    if resume and overwrite:
        raise UsageError("--resume and --overwrite contradict each other; choose one")
    sweep = spec if isinstance(spec, Sweep) else load_spec(spec)
    plan = make_plan(sweep, yes=yes)
    out = Path(out) if out is not None else Path("results") / sweep.name
    out.mkdir(parents=True, exist_ok=True)
    with DirectoryLock(out):
        journal = _start_journal(out, sweep, resume=resume, overwrite=overwrite)
        root = _scratch_root(scratch, out)
        prov = provenance.collect(root)
        try:
            _execute(plan, journal, root, progress, on_result)
        finally:
            shutil.rmtree(root, ignore_errors=True)
            ds = to_dataset(plan, journal.done, provenance=prov)
            save(ds, out / RESULTS_NAME)
    return ds


def _execute(
    plan: Plan,
    journal: Journal,
    root: Path,
    progress: bool,
    on_result: Callable[[TrialResult], None] | None,
) -> None:
    sweep = plan.sweep
    todo = [t for t in plan.trials if t.id not in journal.done]
    tasks = [TrialTask(t, sweep.workload, sweep.read, sweep.measure, str(root)) for t in todo]
    executor = make_executor(sweep.execution)
    print(f"iotune: {executor.describe()}", file=sys.stderr)
    bar = _progress(len(plan.trials), len(plan.trials) - len(todo), progress)
    try:
        for result in executor.map(tasks):
            journal.append(result)
            if bar is not None:
                bar.update(1)
                if result.status != "ok":
                    bar.write(f"trial {result.id} failed: {result.error}")
            if on_result is not None:
                on_result(result)
    finally:
        executor.close()
        if bar is not None:
            bar.close()


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
