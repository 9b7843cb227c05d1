"""The ``batches`` pattern read by xbatcher's ``BatchGenerator``, as an xarray user reads it.

``read.batches.loader: xbatcher``: the trial's file is opened with xarray as
its users open it (``SlabBackend.open_dataset`` with the trial's
``dask_chunks``; none swept: no dask), and a ``BatchGenerator`` with the
arguments the ``xbatcher`` export prints
(:mod:`iotune.backends.xbatcher_exports`) hands over each batch, loaded
(``.values``).  It reads in the trial's process: xbatcher has no workers.  The
open is timed with the first batch, as starting a loader is; the loop and its
figures are those of every loader (:mod:`iotune.measuring.steady`).
"""

from __future__ import annotations

import warnings
from collections.abc import Generator
from pathlib import Path

import numpy as np

from iotune.backends.base import SlabBackend
from iotune.backends.xarray_open import VARIABLE, chunks_from_label
from iotune.backends.xbatcher_exports import generator_arguments
from iotune.model.records import TrialTask
from iotune.model.spec import BatchSpec
from iotune.runner.xarray_read import scheduler


def xbatcher_batches(
    task: TrialTask, backend: SlabBackend, path: Path, spec: BatchSpec
) -> Generator[int, None, None]:
    """Each batch's bytes, as a loop over xbatcher's ``BatchGenerator`` takes them.

    With ``shuffle`` the batches come in an order drawn from the workload's seed
    (every trial of a sweep the same); the Dataset is closed when the loop ends.
    """
    import xbatcher  # type: ignore[import-untyped,import-not-found,unused-ignore]

    w = task.workload
    args = generator_arguments(tuple(w.dims), tuple(w.shape), spec.to_dict())
    params = task.trial.params
    chunks = chunks_from_label(params.get("dask_chunks"))
    with scheduler(params), warnings.catch_warnings():
        # xarray warns when dask chunks separate stored chunks: the trial records that
        warnings.filterwarnings("ignore", message="The specified chunks separate")
        dataset = backend.open_dataset(path, params, chunks=chunks, workload=w)
        try:
            # a Dataset, as the export passes it (xbatcher 0.4 fails on a dask DataArray)
            batches = xbatcher.BatchGenerator(dataset[[VARIABLE]], concat_input_dims=True, **args)
            order = np.arange(len(batches))
            if spec.shuffle:
                order = np.random.default_rng(w.seed).permutation(len(batches))
            for k in order[: spec.batches]:
                values = np.asarray(batches[int(k)][VARIABLE].values)
                yield values.nbytes
                del values  # as a training step drops its batch before the next
        finally:
            dataset.close()
