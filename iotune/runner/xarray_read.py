"""A built-in read pattern read through xarray: the trial's ``dask_chunks`` and ``dask_threads``.

A trial that names ``dask_chunks`` reads each pattern as its users would: the
array opened with ``SlabBackend.open_dataset(..., chunks=...)``, then
``.values`` of the same selections the format's own reader gets
(:func:`iotune.measuring.access.selections`), so what is timed includes
xarray's indexing, dask's graph and its threads, and the reads that dask
chunks not aligned with the stored chunks repeat.  The cache is prepared as
for every read (:func:`iotune.runner.steps.prepare_cache`) and a full read's
checksum is checked.
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path
from typing import Any

from iotune.backends.base import SlabBackend
from iotune.backends.xarray_open import (
    VARIABLE,
    chunks_from_label,
    dask_chunks,
    split_dims,
    traffic,
)
from iotune.measuring import measure
from iotune.measuring.checksum import checksum

MiB = 2**20


def scheduler(params: dict[str, Any]) -> contextlib.AbstractContextManager[Any]:
    """dask's threaded scheduler with the trial's ``dask_threads`` (None: dask's default).

    Set explicitly, so a trial running inside a dask worker computes in its own
    threads rather than on the cluster.
    """
    import dask

    threads = params.get("dask_threads")
    return dask.config.set(scheduler="threads", num_workers=None if threads is None else threads)


def read_selections(
    backend: SlabBackend,
    path: Path,
    task: Any,
    selections: list[Any],
    *,
    checked: bool,
) -> tuple[measure.Stopwatch, int, int, dict[str, Any] | None, dict[str, str]]:
    """Open, read ``selections`` with ``.values`` and close, timing only those calls.

    Returns the clock, the bytes delivered, their checksum (0 unless ``checked``),
    the requests an object store saw (None: local files), and what the read says
    of its dask chunks: ``dask_chunks_read`` (``time=24,y=64,x=64``; ``none``
    without dask) and ``dask_chunks_split`` (``time,y``: the dimensions along
    which they split stored chunks; empty when aligned).
    """
    return read_variable(
        backend, path, task.trial.params, selections, checked=checked, workload=task.workload
    )


def read_variable(
    backend: SlabBackend,
    path: Path,
    params: dict[str, Any],
    selections: list[Any],
    *,
    checked: bool = False,
    workload: Any = None,
    variable: str = VARIABLE,
) -> tuple[measure.Stopwatch, int, int, dict[str, Any] | None, dict[str, str]]:
    """:func:`read_selections` of any ``variable`` of any file the backend opens.

    ``params`` are the read-side parameters (chunk cache, ``dask_chunks``...);
    ``iotune apply`` times a user's own files with it, as a trial times its file.
    """
    chunks = chunks_from_label(params.get("dask_chunks"))
    clock, delivered, crc = measure.Stopwatch(), 0, 0
    with scheduler(params), warnings.catch_warnings():
        # xarray warns when dask chunks separate stored chunks: recorded, not printed
        warnings.filterwarnings("ignore", message="The specified chunks separate")
        with clock:
            ds = backend.open_dataset(path, params, chunks=chunks, workload=workload)
        try:
            var = ds[variable]
            for selection in selections:
                with clock:
                    data = var[selection].values
                delivered += data.nbytes
                if checked:
                    crc = checksum(data, crc)
                del data
            shape, split = dask_chunks(ds, variable), split_dims(ds, variable)
        finally:
            with clock:
                ds.close()
    used = "none" if shape is None else ",".join(f"{d}={n}" for d, n in shape.items())
    layout = {"dask_chunks_read": used, "dask_chunks_split": ",".join(split)}
    return clock, delivered, crc, traffic(ds), layout
