"""One repeat of a user's pattern: cold cache, open as xarray, call, force, check the answer.

The timed span is what the user's own loop would pay: opening the trial's
file through the format's xarray engine with the trial's dask chunks, decoded
as the user's file (:mod:`iotune.measuring.sourceview`), the function,
computing whatever it returned lazily, and closing.  Bytes are what the
process read from storage (``/proc/self/io``) or, on an object
store, what the requests fetched.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from typing import Any

from iotune.backends.base import SlabBackend
from iotune.backends.xarray_open import chunks_from_label, dask_chunks, split_dims
from iotune.backends.xarray_open import traffic as traffic_of
from iotune.core.errors import VerificationError
from iotune.measuring import measure, reference, sameanswer, sourceview, usercode
from iotune.model.quantize import Quantize
from iotune.model.records import TrialTask
from iotune.model.userpatterns import UserPattern
from iotune.runner.xarray_read import scheduler

MiB = 2**20


def user_read_once(
    task: TrialTask,
    backend: SlabBackend,
    path: Path,
    pattern: UserPattern,
    *,
    cache: tuple[str, float],
) -> dict[str, Any]:
    """Run ``pattern`` once on the trial's file; its timing entry, like a built-in read's.

    ``cache`` is the state the caller left the file's cache in and its
    resident fraction (:func:`iotune.runner.steps.prepare_cache`).

    Raises
    ------
    UserCodeError
        The function raised (its last traceback line).
    VerificationError
        Its result differs from the reference beyond what the trial allows.
    """
    usercode.load_function(pattern)  # imported before the clock, like the backend's library
    sourceview.prepare(task.workload)  # the source's coordinates, read once per process
    state, fraction = cache
    params = task.trial.params
    chunks = chunks_from_label(params.get("dask_chunks"))
    clock, before = measure.Stopwatch(), usercode.process_io()
    with scheduler(params), warnings.catch_warnings():
        # xarray warns when dask chunks separate stored chunks: recorded, not printed
        warnings.filterwarnings("ignore", message="The specified chunks separate")
        with clock:
            dataset = backend.open_dataset(path, params, chunks=chunks, workload=task.workload)
        try:
            shape, split = dask_chunks(dataset), split_dims(dataset)  # metadata, untimed
            with clock:
                # decoded as open_dataset decodes the user's file: part of the open's cost
                given = sourceview.view(dataset, task.workload)
                result = sameanswer.flatten(usercode.call(pattern, given))
            traffic = traffic_of(dataset)
        finally:
            with clock:
                dataset.close()
    after = usercode.process_io()
    check(task, pattern, result)
    storage = after.get("read_bytes", 0) - before.get("read_bytes", 0)
    copied = after.get("rchar", 0) - before.get("rchar", 0)
    if traffic is not None:
        nbytes = int(traffic.get("bytes_in", 0))
    else:  # a warm read, or a file system the kernel does not count: bytes handed over
        nbytes = storage if state != "warm" and storage > 0 else copied
    return (traffic or {}) | {
        "s": clock.wall,
        "cpu_s": clock.cpu,
        "bytes": nbytes,
        "storage_bytes": storage,
        "rchar": copied,
        "ops": 1,
        "MiBps": nbytes / MiB / clock.wall,
        "ops_per_s": 1 / clock.wall,
        "resident_fraction": fraction,
        "cache": state,
        # moved into the trial's record by steps.record_dask_chunks, as a built-in read's
        "dask_chunks_read": "none"
        if shape is None
        else ",".join(f"{d}={n}" for d, n in shape.items()),
        "dask_chunks_split": ",".join(split),
    }


def check(task: TrialTask, pattern: UserPattern, result: dict[str, Any]) -> None:
    """Compare with the saved reference; within the trial's lossy limit when it quantises."""
    path = dict(task.references).get(pattern.name)
    if path is None:
        raise VerificationError(f"read:{pattern.name}: no reference answer to compare with")
    saved = _load(path)
    limit = sameanswer.lossy_limit(Quantize.from_params(task.trial.params))
    try:
        sameanswer.compare(saved["result"], result, relative=limit, scale=saved["scale"])
    except VerificationError as err:
        raise VerificationError(f"read:{pattern.name}: {err}") from None


@functools.cache
def _load(path: str) -> dict[str, Any]:
    return reference.load(path)
