"""Run one trial: write, fsync, verify, then cold (or warm) reads per pattern.

The trial knows backends and measurement, not sweeps or executors.  Its
input and output are plain, picklable data so any executor can ship them.
"""

from __future__ import annotations

import os
import resource
import shutil
import tempfile
import time
import traceback
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends import get_backend
from iotune.backends.base import Backend
from iotune.errors import IotuneError, VerificationError
from iotune.run import access, measure
from iotune.run.data import Field, slab_length
from iotune.run.records import TrialResult, TrialTask
from iotune.units import parse_chunk_label

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
        backend = get_backend(task.trial.backend)()
        backend.import_library()  # so no trial's timing pays for the import
        if backend.launches(task.trial.params):  # ranks of its own (MPI): no slabs here
            backend.run_launched(task, workdir, result)
            return result
        nprocs = int(task.trial.params.get("concurrency", 1))
        if nprocs > 1:
            from iotune.run.concurrent import run_concurrent

            run_concurrent(task, workdir, result, nprocs)
        else:
            for repeat in range(task.measure.repeats):
                _one_repeat(task, backend, workdir / f"r{repeat}{backend.suffix}", result)
    except Exception as err:  # a trial must never stop the sweep
        result.status, result.error = "failed", one_line(err) + _storage_hint(workdir)
        result.poisoned = bool(measure.open_files_under(workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        result.ended = time.time()
    return result


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
        try:
            result = run_trial(task)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        if result.status == "failed":
            log.seek(0)
            said = _library_message(log.read(64 * 1024).decode(errors="replace"))
            if said:
                result.error += f" [library said: {said}]"
    return result


def _library_message(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("HDF5-DIAG", "#", "major:", "minor:")):
            return line[:200]
    return ""


def one_line(err: BaseException) -> str:
    if isinstance(err, IotuneError):
        return f"{type(err).__name__}: {err}"
    frame = traceback.extract_tb(err.__traceback__)[-1] if err.__traceback__ else None
    where = f" (at {Path(frame.filename).name}:{frame.lineno})" if frame else ""
    text = " ".join(str(err).split()) or type(err).__name__
    return f"{type(err).__name__}: {text}{where}"


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


def align_of(params: dict[str, Any]) -> int | None:
    """Extent along the first dimension that slabs should be multiples of.

    A shard is written whole, so shards win over chunks: a slab thinner than a
    shard would make zarr rewrite the shard once per slab.
    """
    for key in ("shards", "chunks"):
        value = params.get(key)
        layout = parse_chunk_label(value) if value not in (None, "none") else None
        if isinstance(layout, tuple):
            return layout[0]
    return None


def _one_repeat(task: TrialTask, backend: Backend, path: Path, result: TrialResult) -> None:
    params = task.trial.params
    checksum = write_once(task, backend, path, result)
    result.stored = backend.verify(path, params)
    result.file_bytes = backend.stored_bytes(path)
    for pattern in task.read.patterns:
        entry = read_once(task, backend, path, pattern, checksum)
        result.reads.setdefault(pattern, []).append(entry)
    backend.remove(path)


def write_once(task: TrialTask, backend: Backend, path: Path, result: TrialResult) -> int:
    """Write the workload slab by slab; only library calls and fsync are timed.

    Appends the timing to ``result.write`` and returns the crc32 of the data.
    """
    params, clock, checksum = task.trial.params, measure.Stopwatch(), 0
    length = slab_length(task.workload, align=align_of(params))
    with clock:
        writer = backend.open_writer(path, task.workload, params)
    try:
        for start, slab in Field(task.workload).slabs(length):
            checksum = zlib.crc32(memoryview(np.ascontiguousarray(slab)).cast("B"), checksum)
            with clock:
                writer.write(start, slab)
    finally:
        with clock:
            writer.close()
    if task.measure.fsync:
        with clock:
            measure.fsync_paths(backend.paths(path))
    mib = task.workload.nbytes / MiB
    result.write.append({"s": clock.wall, "cpu_s": clock.cpu, "MiBps": mib / clock.wall})
    return checksum


def prepare_cache(task: TrialTask, files: list[Path]) -> tuple[str, float]:
    """Evict ``files`` and verify it (cold reads), or measure residency (warm)."""
    if get_backend(task.trial.backend).in_memory:
        return "memory", 0.0
    if task.measure.cache == "warm":
        return "warm", measure.resident_fraction(files)
    for _attempt in range(3):
        measure.evict(files)
        fraction = measure.resident_fraction(files)
        if fraction <= task.measure.max_cold_residency:
            return "cold", fraction
    return "not-cold", fraction


def read_once(
    task: TrialTask,
    backend: Backend,
    path: Path,
    pattern: str,
    expected_crc: int,
    *,
    evict: bool = True,
) -> dict[str, Any]:
    """Read ``pattern`` once; ``evict=False`` when the caller prepared the cache."""
    cache, fraction = prepare_cache(task, backend.paths(path)) if evict else ("", float("nan"))
    selections = access.selections(
        pattern, task.workload, task.read, align=align_of(task.trial.params)
    )
    clock, delivered, crc = measure.Stopwatch(), 0, 0
    with clock:
        reader = backend.open_reader(path, task.workload, task.trial.params)
    try:
        for selection in selections:
            with clock:
                data = reader.read(selection)
            delivered += data.nbytes
            if pattern == "full":
                crc = zlib.crc32(memoryview(np.ascontiguousarray(data)).cast("B"), crc)
            # let a reader reuse this buffer for the next selection: one slab-sized
            # buffer stays in the CPU cache where two alternating ones would not
            del data
    finally:
        with clock:
            reader.close()
    if pattern == "full" and crc != expected_crc:
        raise VerificationError("data read back differs from the data written (crc32)")
    return {
        "s": clock.wall,
        "cpu_s": clock.cpu,
        "bytes": delivered,
        "ops": len(selections),
        "MiBps": delivered / MiB / clock.wall,
        "ops_per_s": len(selections) / clock.wall,
        "resident_fraction": fraction,
        "cache": cache,
    }
