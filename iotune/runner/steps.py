"""The steps of one slab-driven repeat: write, verify, prepare the cache, read.

Shared by the trial runner (:mod:`iotune.runner.trial`) and the concurrent
processes of :mod:`iotune.runner.concurrent`; only library calls and fsync are
timed, never data generation or checksums.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from iotune.backends import get_backend
from iotune.backends.base import SlabBackend
from iotune.backends.object.base import ObjectStoreBackend, fetched_fraction
from iotune.core.errors import VerificationError
from iotune.measuring import access, measure
from iotune.measuring.checksum import checksum
from iotune.measuring.data import SLAB_BUDGET, Field, align_of, slab_length, write_slab_length
from iotune.model.quantize import ErrorMeter, Quantize
from iotune.model.records import TrialResult, TrialTask
from iotune.runner import xarray_read
from iotune.runner.loader import read_batches
from iotune.runner.userread import user_read_once

MiB = 2**20


def one_repeat(task: TrialTask, backend: SlabBackend, path: Path, result: TrialResult) -> None:
    written = write_once(task, backend, path, result)
    checksum, result.stored = verified(task, backend, path, written)
    result.file_bytes = backend.stored_bytes(path)
    for pattern in task.read.patterns:
        entry = read_pattern(task, backend, path, pattern, checksum)
        record_dask_chunks(result, entry)
        result.reads.setdefault(pattern, []).append(entry)
    backend.remove(path)


def record_dask_chunks(result: TrialResult, entry: dict[str, Any]) -> None:
    """Move what a read through xarray says of its dask chunks into the trial's record.

    ``dask_chunks_read`` (the chunks dask used) and ``dask_chunks_split`` (the
    dimensions along which they split stored chunks) join ``result.stored``,
    the results' ``file_properties``; an aligned read records no split.
    """
    used, split = entry.pop("dask_chunks_read", None), entry.pop("dask_chunks_split", "")
    if used is not None:
        result.stored["dask_chunks_read"] = used
    if split:
        result.stored["dask_chunks_split"] = split


def write_length(task: TrialTask, backend: SlabBackend) -> int:
    """Slab length of a write: chunk-aligned, within the backend's slab budget."""
    budget = backend.slab_budget(task.trial.params) or SLAB_BUDGET
    return write_slab_length(task.workload, task.trial.params, budget=budget)


def write_once(task: TrialTask, backend: SlabBackend, path: Path, result: TrialResult) -> int:
    """Write the workload slab by slab; only library calls and fsync are timed.

    Appends the timing to ``result.write`` and returns the checksum of the data.
    """
    params, clock, crc = task.trial.params, measure.Stopwatch(), 0
    length = write_length(task, backend)
    with clock:
        writer = backend.open_writer(path, task.workload, params)
    try:
        for start, slab in Field(task.workload).slabs(length):
            crc = checksum(slab, crc)
            with clock:
                writer.write(start, slab)
    finally:
        with clock:
            writer.close()
    if task.measure.fsync and not backend.syncs(params):
        with clock:
            measure.fsync_paths(backend.paths(path))
    mib = task.workload.nbytes / MiB
    entry = {"s": clock.wall, "cpu_s": clock.cpu, "MiBps": mib / clock.wall}
    result.write.append(entry | (writer.traffic() or {}))
    return crc


def verified(
    task: TrialTask, backend: SlabBackend, path: Path, crc: int
) -> tuple[int, dict[str, Any]]:
    """What the backend reads back of the file, and the checksum reads must match.

    That is ``crc``, the written data's, unless the trial quantises: then it is
    the stored values', and their error joins what was read back.
    """
    stored = backend.verify(path, task.trial.params)
    if Quantize.from_params(task.trial.params).lossy:
        crc, errors = stored_error(task, backend, path)
        stored |= errors
    return crc, stored


def stored_error(task: TrialTask, backend: SlabBackend, path: Path) -> tuple[int, dict[str, float]]:
    """What a lossy trial stored: the checksum reads must match, and its error.

    Untimed: the stored values are read back slab by slab and compared with
    the values written, which are made again.
    """
    length = slab_length(task.workload, align=align_of(task.trial.params))
    meter, crc = ErrorMeter(), 0
    reader = backend.open_reader(path, task.workload, task.trial.params)
    try:
        for start, slab in Field(task.workload).slabs(length):
            stored = reader.read((slice(start, start + slab.shape[0]),))
            meter.update(slab, stored)
            crc = checksum(stored, crc)
    finally:
        reader.close()
    return crc, meter.result()


def prepare_cache(task: TrialTask, files: list[Path]) -> tuple[str, float]:
    """Evict ``files`` and verify it (cold reads), or measure residency (warm)."""
    backend = get_backend(task.trial.backend)
    if backend.in_memory:
        return "memory", 0.0
    if issubclass(backend, ObjectStoreBackend):  # checked after the read: check_fetched
        return "cold", float("nan")
    return measure.prepare_cache(
        files, mode=task.measure.cache, max_residency=task.measure.max_cold_residency
    )


def check_fetched(
    task: TrialTask, backend: SlabBackend, path: Path, traffic: dict[str, Any]
) -> float:
    """A full read from an object store fetched every stored byte: none came from a cache.

    Returns the share not fetched (the counterpart of page-cache residency).
    """
    stored = backend.stored_bytes(path)
    fraction = fetched_fraction(int(traffic["bytes_in"]), stored)
    if fraction > task.measure.max_cold_residency:
        raise VerificationError(
            f"not a cold read: it fetched {traffic['bytes_in']} of the {stored} stored bytes "
            f"({fraction:.0%} came from a client-side cache; allowed "
            f"{task.measure.max_cold_residency:.0%})"
        )
    return fraction


def read_pattern(
    task: TrialTask,
    backend: SlabBackend,
    path: Path,
    pattern: str,
    expected_crc: int,
    *,
    evict: bool = True,
) -> dict[str, Any]:
    """Read ``pattern`` once: a built-in's selections, or the user's code on the Dataset."""
    user = task.read.user_pattern(pattern)
    if user is None:
        return read_once(task, backend, path, pattern, expected_crc, evict=evict)
    cache = prepare_cache(task, backend.paths(path)) if evict else ("", float("nan"))
    return user_read_once(task, backend, path, user, cache=cache)


def read_once(
    task: TrialTask,
    backend: SlabBackend,
    path: Path,
    pattern: str,
    expected_crc: int,
    *,
    evict: bool = True,
) -> dict[str, Any]:
    """Read ``pattern`` once; ``evict=False`` when the caller prepared the cache.

    A trial with ``dask_chunks`` reads through xarray (:mod:`iotune.runner.xarray_read`);
    its entry also says which dask chunks it read (``dask_chunks_read``) and along which
    dimensions they split stored chunks (``dask_chunks_split``, empty when aligned).
    """
    cache, fraction = prepare_cache(task, backend.paths(path)) if evict else ("", float("nan"))
    if pattern == "batches":  # samples in batches, by loader workers
        return read_batches(task, backend, path) | {"resident_fraction": fraction, "cache": cache}
    params = task.trial.params
    budget = backend.read_budget(params) or SLAB_BUDGET
    selections = access.selections(
        pattern, task.workload, task.read, align=align_of(params), budget=budget
    )
    extra: dict[str, Any] = {}
    if params.get("dask_chunks") is not None:
        clock, delivered, crc, sent, extra = xarray_read.read_selections(
            backend, path, task, selections, checked=pattern == "full"
        )
        requests: Callable[[], dict[str, Any] | None] = lambda: sent  # noqa: E731
    else:
        clock, delivered, crc, requests = _read_library(task, backend, path, pattern, selections)
    if pattern == "full" and crc != expected_crc:
        raise VerificationError("data read back differs from the data written (crc32c)")
    traffic = requests()
    if traffic is not None and pattern == "full":
        fraction = check_fetched(task, backend, path, traffic)
    return (
        (traffic or {})
        | extra
        | {
            "s": clock.wall,
            "cpu_s": clock.cpu,
            "bytes": delivered,
            "ops": len(selections),
            "MiBps": delivered / MiB / clock.wall,
            "ops_per_s": len(selections) / clock.wall,
            "resident_fraction": fraction,
            "cache": cache,
        }
    )


def _read_library(
    task: TrialTask, backend: SlabBackend, path: Path, pattern: str, selections: list[Any]
) -> tuple[measure.Stopwatch, int, int, Callable[[], dict[str, Any] | None]]:
    """Read ``selections`` with the format's own reader.

    Returns the clock, the bytes, their checksum and the reader's ``traffic``, asked
    only once the checksum is checked.
    """
    clock, delivered, crc = measure.Stopwatch(), 0, 0
    with clock:
        reader = backend.open_reader(path, task.workload, task.trial.params)
    try:
        for selection in selections:
            with clock:
                data = reader.read(selection)
            delivered += data.nbytes
            if pattern == "full":
                crc = checksum(data, crc)
            # let a reader reuse this buffer for the next selection: one slab-sized
            # buffer stays in the CPU cache where two alternating ones would not
            del data
    finally:
        with clock:
            reader.close()
    return clock, delivered, crc, lambda: reader.traffic()
