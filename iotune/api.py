"""What notebooks and the CLI call."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.errors import UsageError
from iotune.executors import make_executor
from iotune.results.dataset import RESULTS_NAME, open_results, save, to_dataset
from iotune.run import provenance
from iotune.run.journal import DirectoryLock, Journal
from iotune.run.plan import Plan, make_plan
from iotune.run.records import TrialResult, TrialTask
from iotune.spec.model import Sweep
from iotune.spec.parse import load_spec as _load_spec_file
from iotune.spec.parse import load_spec_text

if TYPE_CHECKING:
    import xarray as xr

JOURNAL_NAME = "journal.jsonl"

__all__ = ["load_spec", "make_plan", "open_results", "run", "save_plots"]


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
    if not overrides:
        return _load_spec_file(path)
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return _load_spec_file(path)  # raises the SpecError that names the problem
    if data is None:
        data = {}
    for key, value in overrides.items():
        _apply_override(data, key, value, source=str(path))
    shown = ", ".join(f"{k}={v!r}" for k, v in overrides.items())
    text = f"# {path} with overrides: {shown}\n" + yaml.safe_dump(
        data, sort_keys=False, default_flow_style=None
    )
    return load_spec_text(text, source=str(path))


def _apply_override(data: Any, key: object, value: Any, *, source: str) -> None:
    """Set ``data[a][b][c] = value`` for ``key = "a.b.c"`` (``None`` removes it)."""
    from iotune.errors import SpecError

    parts = key.split(".") if isinstance(key, str) else []
    if not parts or not all(parts):
        raise SpecError(
            "overrides", f"{key!r} is not a dotted key like 'parameters.codec'", source=source
        )
    node = data
    for depth, part in enumerate(parts):
        if not isinstance(node, dict):
            where = ".".join(parts[:depth])
            raise SpecError(
                where,
                f"override {key!r}: {where} is {node!r}, not a mapping, so it has no keys",
                source=source,
            )
        if depth == len(parts) - 1:
            break
        if node.get(part) is None:
            if value is None:
                return  # removing below an absent section: nothing to do
            node[part] = {}
        node = node[part]
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = _plain(value)


def _plain(value: Any) -> Any:
    """A copy YAML can dump: tuples become lists, mappings plain dicts."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


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
        A spec file or an already loaded :class:`~iotune.spec.model.Sweep`.
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
            from iotune.run.calibrate import (  # the device limit, if calibrated
                attach_limit,
                load_limit,
            )

            ds = attach_limit(to_dataset(plan, journal.done, provenance=prov), load_limit(root))
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
