"""One measured run's surroundings, the same for a grid (``iotune run``) and a search (``tune``).

A :class:`Session` owns what lies around the trials: the checks before
anything is created (paths, room on scratch), the output directory and its
lock, signal handling (:mod:`iotune.app.stopping`), the journal, the scratch
directory (removed at the end), provenance, the calibrated device limit, the
executor (started, described, stopped at once when interrupted) and the saved
``results.nc``.  What to run and how to turn the journal into results is the
caller's: :func:`iotune.app.api.run` walks a plan, :mod:`iotune.app.tuning` a search.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from iotune.app.stopping import stop_on_signals
from iotune.core.errors import UsageError
from iotune.core.logs import quiet
from iotune.executors import make_executor
from iotune.model.records import Trial, TrialTask
from iotune.model.spec import StorageSpec, Sweep, Workload
from iotune.results.dataset import RESULTS_NAME, save
from iotune.results.limit import attach_limit
from iotune.runner import preflight, provenance
from iotune.runner.calibrate import load_limit
from iotune.runner.journal import DirectoryLock, Journal
from iotune.runner.options import RunOptions
from iotune.runner.scratch import make_scratch_root
from iotune.specfile.overrides import apply_override, load_with_overrides
from iotune.specfile.parse import load_spec_text

if TYPE_CHECKING:
    import xarray as xr

    from iotune.executors.base import Executor

logger = logging.getLogger(__name__)
JOURNAL_NAME = "journal.jsonl"


def with_overrides(spec: str | Path | Sweep, overrides: Mapping[str, Any]) -> Sweep:
    """A spec file, or a loaded Sweep, with dotted ``overrides`` applied and validated.

    Raises
    ------
    SpecError
        A bad value; the message names the field.
    UsageError
        Overrides for a Sweep built without its spec text.
    """
    if not isinstance(spec, Sweep):
        return load_with_overrides(spec, overrides)
    if not overrides:
        return spec
    if not spec.text:
        keys = ", ".join(overrides)
        raise UsageError(f"{keys}: sweep {spec.name!r} has no spec text to change; edit its spec")
    import yaml

    data = yaml.safe_load(spec.text) or {}
    for key, value in overrides.items():
        apply_override(data, key, value, source=spec.name)
    shown = ", ".join(f"{k}={v!r}" for k, v in overrides.items())
    text = f"# {spec.name} with overrides: {shown}\n" + yaml.safe_dump(data, sort_keys=False)
    # relative paths in it (the user's scripts) are found where the spec's were
    base = Path(spec.source).parent if spec.source else None
    return load_spec_text(text, source=spec.name, base=base)


def _object_area(storage: StorageSpec, root: Path, stack: ExitStack) -> dict[str, str]:
    """The run's area on the object store, marked, and removed when the run ends.

    Returns its provenance (endpoint, bucket, prefix, client versions).
    """
    import os

    from iotune.objectstore.scratch import mark, remove_area
    from iotune.objectstore.target import Target

    target = Target(storage, area=root.name)
    stack.callback(_remove_area, target, remove_area)
    mark(target, os.getpid())
    return target.describe()


def _remove_area(target: Any, remove: Callable[[Any], int]) -> None:
    try:
        remove(target)
    except OSError as err:  # said, not raised: the results are saved regardless
        logger.warning(
            "could not remove the run's objects under %s (%s): iotune clean --storage %s",
            target.url(target.key()),
            err,
            target.spec.url,
        )


def _first_missing(path: Path) -> Path | None:
    """The outermost directory of ``path`` that does not exist yet (None: it exists)."""
    if path.exists():
        return None
    while not path.parent.exists():
        path = path.parent
    return path


def _entries(out: Path) -> set[Path]:
    """What ``out`` and its ``references`` folder hold (a run adds nothing deeper)."""
    from iotune.measuring.reference import FOLDER

    found = set(out.iterdir())
    if (out / FOLDER).is_dir():
        found |= set((out / FOLDER).iterdir())
    return found


def _leave_as_found(out: Path, *, made: Path | None, before: set[Path]) -> None:
    """Remove what a refused run made: the directories it created, else its new entries."""
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        return
    for path in sorted(_entries(out) - before, reverse=True):  # a folder's files first
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


class Session:
    """The output directory, journal, scratch, executor and results of one measured run.

    Used as a context manager: entering checks the paths and the room on
    scratch before anything is created, then takes the directory's lock,
    catches signals and makes the scratch directory; leaving removes the
    scratch and, once :meth:`results_from` named how, saves ``OUT/results.nc``
    with the device limit attached, also after an interruption.

    Parameters
    ----------
    sweep
        The sweep measured (the options' execution overrides already applied).
    options
        Output directory (created if missing; required here), ``resume``,
        ``overwrite`` (discards the journal, results and ``discard`` files of an
        earlier run in ``out``, nothing else of the directory), ``scratch``
        (default ``out``) and ``force`` (skip the room check; the paths are
        checked regardless): :class:`~iotune.runner.options.RunOptions`.
    trials
        The trials whose room on scratch is checked: a grid's, or every trial a
        search may ask for.
    discard
        Further file names in ``out`` that belong to a run (``search.jsonl``).

    Raises
    ------
    UsageError
        On entering and before anything is created: bad paths or too little room.
    LockError
        Another run holds ``out``.
    """

    def __init__(
        self,
        sweep: Sweep,
        *,
        options: RunOptions,
        trials: tuple[Trial, ...],
        discard: Sequence[str] = (),
    ) -> None:
        if options.out is None:
            raise ValueError("Session: options.out is None; use RunOptions.with_default_out")
        self.sweep, self.options, self.out, self.trials = sweep, options, options.out, trials
        self.scratch = options.scratch
        self.discard = (JOURNAL_NAME, RESULTS_NAME, *discard)
        self.journal: Journal
        self.root: Path
        self.provenance: dict[str, str] = {}
        self.limit: dict[str, Any] | None = None
        self.dataset: xr.Dataset | None = None
        self._build: Callable[[], xr.Dataset] | None = None
        self._bars: list[Any] = []
        self._stack = ExitStack()
        self._references: dict[Workload, tuple[tuple[str, str], ...]] = {}

    def __enter__(self) -> Session:
        preflight.check_trials(
            self.sweep, self.trials, out=self.out, scratch=self.scratch, force=self.options.force
        )
        if self.sweep.storage is not None:  # before anything is created, here or there
            from iotune.objectstore.check import check
            from iotune.objectstore.target import Target

            check(Target(self.sweep.storage))
        made = _first_missing(self.out)
        self.out.mkdir(parents=True, exist_ok=True)
        with ExitStack() as stack:
            stack.enter_context(stop_on_signals())
            stack.enter_context(DirectoryLock(self.out))
            before = _entries(self.out)
            try:
                self._prepare(stack)
            except BaseException:  # refused before any trial: leave OUT as it was found
                _leave_as_found(self.out, made=made, before=before)
                raise
            self._stack = stack.pop_all()
        return self

    def _prepare(self, stack: ExitStack) -> None:
        """The journal, the user's references, scratch, provenance and the device limit."""
        sweep, overwrite = self.sweep, self.options.overwrite
        if not overwrite:  # an earlier run's results refuse this one first, before the references
            self.journal = self._journal()
        if sweep.read.user:  # before the first trial: an error in the user's code stops the run
            self.references(sweep.workload)
        if overwrite:  # only the files a run writes, and only now that nothing refused the run
            for name in self.discard:
                (self.out / name).unlink(missing_ok=True)
            self.journal = self._journal()
        self.root = make_scratch_root(self.scratch, self.out)
        stack.callback(shutil.rmtree, self.root, ignore_errors=True)
        self.provenance = provenance.collect(self.root)
        if sweep.storage is not None:
            self.provenance |= _object_area(sweep.storage, self.root, stack)
        self.limit = load_limit(self.root, storage=sweep.storage)  # the device or store limit
        if sweep.read.user:  # kept in the results, so a replay finds the code again
            self.provenance["user_patterns"] = json.dumps(
                [u.to_dict() | {"base": u.base} for u in sweep.read.user]
            )

    def _journal(self) -> Journal:
        return Journal(
            self.out / JOURNAL_NAME,
            digest=self.sweep.digest(),
            name=self.sweep.name,
            resume=self.options.resume,
        )

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._stack:  # then: scratch removed, lock released, signals restored
            for bar in self._bars:
                bar.close()
            # the processes that wrote in scratch are gone (the executor stopped them)
            shutil.rmtree(self.root, ignore_errors=True)
            if self._build is not None:
                self.dataset = attach_limit(self._build(), self.limit)
                save(self.dataset, self.out / RESULTS_NAME)

    def results_from(self, build: Callable[[], xr.Dataset]) -> None:
        """How to build the results from what was measured; saved on leaving, come what may."""
        self._build = build

    def task(self, trial: Trial) -> TrialTask:
        """The task that measures ``trial`` in this session's scratch."""
        sweep = self.sweep
        return TrialTask(
            trial,
            sweep.workload_at(trial.params.get("fidelity")),
            sweep.read,
            sweep.measure,
            str(self.root),
            sweep.execution.launcher,
            sweep.storage,
            references=self.references(sweep.workload_at(trial.params.get("fidelity"))),
        )

    def references(self, workload: Workload) -> tuple[tuple[str, str], ...]:
        """``(pattern, file)`` of the answer each user pattern must give on ``workload``.

        Made once per workload (a fidelity's is shorter) in a child process and
        kept in the output directory, where a resumed run finds it.
        """
        if workload not in self._references:
            from iotune.measuring import reference

            self._references[workload] = tuple(
                (u.name, str(reference.ensure(self.out, workload, u))) for u in self.sweep.read.user
            )
        return self._references[workload]

    @contextmanager
    def executor(self) -> Iterator[Executor]:
        """The sweep's executor, said where it runs; stopped at once when the block fails.

        distributed's own start-up and shut-down chatter is quieted to warnings
        while the block runs (the describe line says where the trials run).
        """
        if self.sweep.execution.executor == "dask":
            import distributed  # noqa: F401 - its import sets its loggers' levels: quiet after
        with quiet("distributed"):
            executor = make_executor(self.sweep.execution)
            logger.info("%s", executor.describe())
            try:
                yield executor
            except BaseException:  # interrupted (or failing): stop what still runs, now
                executor.abort()
                raise
            else:
                executor.close()

    def progress(self, total: int, initial: float, *, unit: str, enabled: bool) -> Any:
        """A progress bar on stderr (closed on leaving), or None when not ``enabled``.

        Counts may be fractional (a repeat is part of a trial); they are shown whole.
        """
        if not enabled:
            return None
        from tqdm.auto import tqdm

        plural = unit if unit == "s" else f"{unit}s"  # seconds of a time budget, or trials
        shown = "{l_bar}{bar}| {n:.0f}/{total_fmt} " + plural + " [{elapsed}<{remaining}]"
        bar = tqdm(
            total=total,
            initial=initial,
            unit=unit,
            file=sys.stderr,
            dynamic_ncols=True,
            bar_format=shown,
        )
        self._bars.append(bar)
        return bar
