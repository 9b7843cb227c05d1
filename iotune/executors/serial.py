"""Run trials one after another, each backend in a worker process of its own.

Isolation is not a luxury: the netCDF4 and h5py wheels bundle different HDF5
builds, and importing netCDF4 points ``HDF5_PLUGIN_PATH`` at its own filter
plugins for the whole process, which breaks h5py's blosc.  A worker per
backend keeps each library in its own process, and a library that crashes
takes down only its worker: the trial is recorded as failed and the sweep
goes on.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from iotune.core.processes import stop_group
from iotune.executors.base import Executor
from iotune.executors.environ import prepare_worker
from iotune.model.records import TrialResult, TrialTask
from iotune.runner.trial import run_trial, run_trial_captured


class SerialExecutor(Executor):
    """One trial at a time: nothing else competes for the file system.

    Parameters
    ----------
    isolate
        Run each backend's trials in a dedicated spawned worker process
        (default).  ``False`` runs them in this process, which is only safe
        for a single backend.
    """

    def __init__(self, *, isolate: bool = True) -> None:
        self.isolate = isolate
        self._pools: dict[str, ProcessPoolExecutor] = {}

    def _pool(self, backend: str) -> ProcessPoolExecutor:
        if backend not in self._pools:
            self._pools[backend] = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=prepare_worker,
                initargs=(backend,),
            )
        return self._pools[backend]

    def map(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        for task in tasks:
            if not self.isolate:
                yield run_trial(task)
                continue
            started = time.time()
            try:
                result = self._pool(task.trial.backend).submit(run_trial_captured, task).result()
                if result.poisoned:  # only the process's exit frees what the library holds
                    self._pools.pop(task.trial.backend).shutdown(wait=True)
                yield result
            except BrokenProcessPool:
                self._pools.pop(task.trial.backend).shutdown(wait=False, cancel_futures=True)
                yield TrialResult(
                    task.trial.id,
                    "failed",
                    _died(task),
                    raw_bytes=0,
                    started=started,
                    ended=time.time(),
                )

    def close(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools.clear()

    def abort(self) -> None:
        """Stop each worker's process group (the worker, its writers, mpiexec and ranks)."""
        for pool in self._pools.values():
            # each worker leads its own group (prepare_worker); ProcessPoolExecutor
            # has no public list of its processes before Python 3.14
            for pid in list(getattr(pool, "_processes", None) or {}):
                stop_group(pid)
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools.clear()

    def describe(self) -> str:
        return "serial (one trial at a time, a worker process per backend)"


def _died(task: TrialTask) -> str:
    return (
        f"worker process died during the trial (a crash in the {task.trial.backend} "
        "library, or killed)"
    )
