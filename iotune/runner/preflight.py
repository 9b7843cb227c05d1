"""Checks before the first trial: the output and scratch paths, and room on scratch.

A sweep that cannot finish should say so in one line before it creates
anything, not hours later with a full file system.  Nothing here creates,
writes or removes a file.

Room: a trial keeps on scratch at most

- a slab backend: one repeat's file at a time (written, read, removed), times
  ``concurrency`` (each concurrent process writes its own file);
- a launched backend (MPI-IO, h5py with ``nprocs > 1``): ``launched_bytes`` of
  all ranks together;
- the memory backend: nothing;

each counted as the raw bytes plus 5 % and 16 MiB, since compressed data of an
incompressible field is slightly larger than raw and a format adds headers and
indexes.  With the dask executor and ``execution.per_host > 1``, the
``per_host`` largest trials may be on one host's scratch at once.  That need
must fit into the free space minus a reserve of 1 GiB (5 % of the file system
when it is smaller than 20 GiB), so that a sweep never fills it up for
everyone else; space held by the scratch of killed runs counts as free, since
the run removes it first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from iotune.backends import get_backend
from iotune.backends.base import LaunchedBackend
from iotune.core.errors import UsageError
from iotune.core.extras import require
from iotune.core.units import format_size
from iotune.model.records import Trial
from iotune.model.spec import ExecutionSpec, Sweep, Workload
from iotune.runner.plan import Plan
from iotune.runner.provenance import mount_of
from iotune.runner.scratch import reclaimable

MiB, GiB = 2**20, 2**30
#: what a file may hold beyond the raw bytes: a fraction of them plus a constant
EXPANSION, FILE_OVERHEAD = 0.05, 16 * MiB
#: left free on the scratch file system: this much, or this fraction of a small one
RESERVE, RESERVE_FRACTION = 1 * GiB, 0.05


def check(plan: Plan, *, out: Path, scratch: Path | None, force: bool = False) -> None:
    """Refuse, in one line, a run that could not write its output or fill scratch.

    Raises
    ------
    UsageError
        ``-o`` names a file or a place that cannot be written, ``--scratch``
        is not a writable directory, or the largest trial (``per_host`` of
        them with dask) needs more room than scratch has and ``force`` is false.
    """
    check_trials(plan.sweep, plan.trials, out=out, scratch=scratch, force=force)


def check_trials(
    sweep: Sweep,
    trials: tuple[Trial, ...],
    *,
    out: Path,
    scratch: Path | None,
    force: bool = False,
) -> None:
    """:func:`check` for ``trials`` of ``sweep`` (a grid's, or those a search may run)."""
    check_libraries(trials)
    # every backend named, also one whose trials resolve() found not applicable (a
    # generated workload for a backend that reads a source): said in a line, not a status
    for name in sorted(set(sweep.backends) | {t.backend for t in trials}):
        get_backend(name).check_workload(sweep.workload)
    out_anchor = writable_anchor("-o", out)
    if scratch is None:
        parent, anchor = out, out_anchor
    else:
        if not scratch.is_dir():
            raise UsageError(f"--scratch {scratch}: not an existing directory")
        parent = anchor = writable_anchor("--scratch", scratch)
    if not force:
        check_room(sweep, trials, parent, anchor)


def check_libraries(trials: tuple[Trial, ...]) -> None:
    """Refuse a backend whose library comes from an extra that is not installed.

    Raises
    ------
    MissingExtraError
        One line naming the backend, its library and ``pip install 'iotune[EXTRA]'``.
    """
    for name in sorted({t.backend for t in trials}):
        cls = get_backend(name)
        if cls.extra is not None:
            require(cls.library, extra=cls.extra, feature=f"the {name} backend")


def writable_anchor(option: str, path: Path) -> Path:
    """The nearest existing directory at or above ``path``, if iotune may write there."""
    given = anchor = Path(path).absolute()
    try:
        while not anchor.exists():
            if anchor.is_symlink():
                raise UsageError(f"{option} {path}: {anchor} is a broken symbolic link")
            anchor = anchor.parent
        if not anchor.is_dir():
            where = "" if anchor == given else f"{anchor} "
            raise UsageError(f"{option} {path}: {where}exists and is not a directory")
        readonly = os.statvfs(anchor).f_flag & os.ST_RDONLY
    except OSError as err:
        raise UsageError(f"{option} {path}: {err.strerror or err}") from None
    mount = mount_of(anchor)
    if readonly:
        raise UsageError(
            f"{option} {path}: {mount['mount']} ({mount['fs_type']}) is mounted read-only"
        )
    if not os.access(anchor, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path}: {anchor} is not writable (permission denied)")
    return anchor


@dataclass(frozen=True)
class Need:
    """The most bytes on one host's scratch at once, and the trials behind them."""

    nbytes: int
    trials: tuple[Trial, ...]


def file_bytes(raw: int) -> int:
    """Room for a file of ``raw`` bytes once stored (compressed data can expand)."""
    return raw + int(raw * EXPANSION) + FILE_OVERHEAD


def footprint(trial: Trial, workload: Workload) -> int:
    """Most bytes ``trial`` keeps on scratch at one time."""
    cls = get_backend(trial.backend)
    if cls.in_memory:
        return 0
    if cls.launches(trial.params):
        backend = cls()
        assert isinstance(backend, LaunchedBackend)
        return file_bytes(backend.launched_bytes(trial.params, workload))
    return int(trial.params.get("concurrency") or 1) * file_bytes(workload.nbytes)


def need(trials: tuple[Trial, ...], workload: Workload, execution: ExecutionSpec) -> Need:
    """What the largest trial needs, or the ``per_host`` largest ones with dask."""
    sizes = sorted(((footprint(t, workload), t) for t in trials), key=lambda s: -s[0])
    top = sizes[: execution.per_host if execution.contended else 1]
    return Need(sum(n for n, _ in top), tuple(t for _, t in top))


def reserve(fs_bytes: int) -> int:
    """Bytes a sweep leaves free on a file system of ``fs_bytes``."""
    return min(RESERVE, int(fs_bytes * RESERVE_FRACTION))


def check_room(sweep: Sweep, trials: tuple[Trial, ...], parent: Path, anchor: Path) -> None:
    """Refuse when the largest of ``trials`` would not fit on the file system of ``anchor``.

    ``parent`` is where the run's scratch directory will be (it may not exist
    yet); the scratch left there by killed runs counts as free.
    """
    wanted = need(trials, sweep.workload, sweep.execution)
    if not wanted.nbytes:
        return
    fs = os.statvfs(anchor)
    free, kept = fs.f_bavail * fs.f_frsize, reserve(fs.f_blocks * fs.f_frsize)
    if free - kept >= wanted.nbytes:
        return  # the common case: no walk through old scratch
    old = reclaimable(parent)
    free += old
    if free - kept >= wanted.nbytes:
        return
    mount = mount_of(anchor)
    largest = wanted.trials[0]
    label = " ".join(filter(None, (largest.backend, largest.label())))
    if len(wanted.trials) > 1:
        who = f"{len(wanted.trials)} trials at once (execution.per_host), the largest {label}, need"
    else:
        who = f"trial {label} needs"
    has = f"{format_size(free, exact=False)} free"
    if old:
        has += f" (with {format_size(old, exact=False)} that killed runs left)"
    if wanted.nbytes <= free:
        has += f", of which iotune leaves {format_size(kept, exact=False)}"
    size = format_size(wanted.nbytes, exact=False)
    raise UsageError(
        f"{who} {size} on {mount['mount']} ({mount['fs_type']}), {has}; --force runs it anyway"
    )
