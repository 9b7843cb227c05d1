"""Run one trial: decide how (slabs here, N concurrent processes, or launched
ranks), catch and describe any failure, always remove the trial's scratch.

The steps of a repeat are in :mod:`iotune.runner.steps`.  The trial knows
backends and measurement, not sweeps or executors.  Its
input and output are plain, picklable data so any executor can ship them.
"""

from __future__ import annotations

import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from iotune.backends.base import LaunchedBackend, SlabBackend
from iotune.core.errors import one_line
from iotune.measuring import measure, precision
from iotune.model.records import TrialResult, TrialTask
from iotune.runner import library_said, placed, steps
from iotune.runner.concurrent import run_concurrent

MiB = 2**20


def run_trial(task: TrialTask) -> TrialResult:
    """Measure one trial; failures are caught and described, never raised.

    Scratch files are removed afterwards, also when the trial fails.
    """
    result = TrialResult(task.trial.id, "ok", raw_bytes=task.workload.nbytes, started=time.time())
    workdir = Path(task.scratch) / f"trial-{task.trial.id}"
    try:
        if workdir.exists():  # left by a worker that died running this trial: a retry
            shutil.rmtree(workdir)
        workdir.mkdir(parents=True)
        backend = placed.make_backend(task)
        backend.import_library()  # so no trial's timing pays for the import
        nprocs = int(task.trial.params.get("concurrency", 1))
        if backend.launches(task.trial.params):  # ranks of its own (MPI): no slabs here
            assert isinstance(backend, LaunchedBackend)
            backend.run_launched(task, workdir, result)
        elif nprocs > 1:
            run_concurrent(task, workdir, result, nprocs)
        else:
            assert isinstance(backend, SlabBackend)
            warm_up(task, backend, workdir)
            for repeat in precision.repeat_indices(task.measure, result, task.early_stop):
                steps.one_repeat(task, backend, workdir / f"r{repeat}{backend.suffix}", result)
    except Exception as err:  # a trial must never stop the sweep
        result.status, result.error = "failed", one_line(err) + _storage_hint(workdir)
        result.poisoned = bool(measure.open_files_under(workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if task.storage is not None:
            _remove_objects(task, workdir, result)
        result.ended = time.time()
    return result


def _remove_objects(task: TrialTask, workdir: Path, result: TrialResult) -> None:
    """Delete what the trial left on the object store (a failed write's parts included)."""
    from iotune.objectstore.scratch import remove_prefix
    from iotune.objectstore.target import Target

    target = Target(task.storage, area=Path(task.scratch).name)  # type: ignore[arg-type]
    try:
        # an upload cut short lives on only when the run is stopped: the session's
        # removal of its area aborts it (a listing per trial would cost 0.1-0.2 s)
        remove_prefix(target, target.key(workdir.name), uploads=False)
    except OSError as err:  # the session removes its whole area at the end, and says so
        if result.status == "ok":
            result.error = f"could not remove the trial's objects: {one_line(err)}"


def run_trial_captured(task: TrialTask) -> TrialResult:
    """:func:`run_trial` with the process's C-level stderr captured.

    Libraries often explain a failure only on stderr (HDF5 filters print
    "Buffer is uncompressible" and return a bare "HDF error"); the first such
    line is added to a failed trial's reason.  Used in worker processes only,
    where nothing else writes to stderr.
    """
    with tempfile.TemporaryFile(mode="w+b") as log:
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        result: TrialResult | None = None
        try:
            result = run_trial(task)
        finally:
            _restore_stderr(saved, retiring=result is not None and result.poisoned)
        if result.status == "failed":
            log.seek(0)
            said = _library_message(log.read(64 * 1024).decode(errors="replace"))
            known = library_said.cause(said) if said else None
            if known:  # the cause first: the library's own words stay as evidence
                result.error = f"{known} [library said: {said}; {result.error}]"
            elif said:
                result.error += f" [library said: {said}]"
    return result


def _restore_stderr(saved: int, *, retiring: bool) -> None:
    """Give fd 2 back, unless the worker is about to be retired for the files it holds.

    A poisoned worker still holds the failed trial's open file; at exit HDF5 flushes
    its cached chunks through the same failing filter and says so once per chunk
    (thousands of "Buffer is uncompressible" lines on the terminal).  Those lines
    repeat what the trial's record already holds, so they go to /dev/null.
    """
    if retiring:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
    else:
        os.dup2(saved, 2)
    os.close(saved)


def _library_message(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("HDF5-DIAG", "#", "major:", "minor:")):
            return line[:200]
    return ""


def _storage_hint(workdir: Path) -> str:
    """Name the storage limit behind a failure: libraries often say only "HDF error"."""
    try:
        fs = os.statvfs(workdir)
        sizes = [p.stat().st_size for p in workdir.rglob("*") if p.is_file()]
    except OSError:
        return ""
    if fs.f_bavail * fs.f_frsize < 4 * MiB:
        return (
            f" [no space left on the scratch file system: {fs.f_bavail * fs.f_frsize} bytes free]"
        )
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY and sizes and max(sizes) >= limit - 64 * 1024:
        return f" [file size limit reached: RLIMIT_FSIZE (ulimit -f) is {limit} bytes]"
    return ""


#: backends whose first trial in this process has run its warm-up
_WARMED: set[str] = set()


def warm_up(task: TrialTask, backend: SlabBackend, workdir: Path) -> None:
    """One untimed write and read of the trial's size, once per backend and process.

    The first repeat in a fresh process otherwise pays for first-touch page
    faults of its buffers, lazy library initialisation and cold allocator
    arenas, and stands out from the others.
    """
    if task.trial.backend in _WARMED:
        return
    scratch = TrialResult(task.trial.id, "ok")
    steps.one_repeat(task, backend, workdir / f"warm-up{backend.suffix}", scratch)
    _WARMED.add(task.trial.backend)
