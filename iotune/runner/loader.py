"""The ``batches`` pattern read by iotune's own loader, the way torch's DataLoader reads.

Used where PyTorch is not installed, or where the spec asks for it
(``read.batches.loader: iotune``); otherwise torch's own ``DataLoader`` reads
(:mod:`iotune.runner.torch_loader`), or xbatcher's ``BatchGenerator`` where the
spec asks for it (:mod:`iotune.runner.xbatcher_loader`).  With ``num_workers: 0`` the trial's
process opens the store and reads batch after batch.  Otherwise, as
``_MultiProcessingDataLoaderIter`` does, ``num_workers`` processes each open
the store once (the backend's own reader) and assemble whole batches; batch
``k`` goes to worker ``k % num_workers``, at most ``prefetch_factor x
num_workers`` batches are outstanding (one more is handed out as each
arrives), and batches come back in order.  Each worker has its own result pipe,
fed by a sender thread as a ``multiprocessing.Queue`` is, so a worker runs
ahead while the trial takes earlier batches, and a worker that dies is seen at
once (its pipe ends, its sentinel fires) instead of blocking the trial.  Both
loaders are consumed by the same loop (:mod:`iotune.measuring.steady`).

Workers start from a fork server (fork is unsafe in a threaded process; HDF5
and zarr start threads), which has imported this module and the backend's
library, so a worker starts as quickly as a forked one.  The timed span runs
from starting the workers to the last batch in hand, as iterating a DataLoader
without persistent workers does; stopping them is not timed.  Workers are
stopped when the read ends, fails or is interrupted; they also die with the
fork server, which dies with the trial's process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import queue
import signal
import threading
import time
from collections.abc import Generator
from multiprocessing import connection
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends import get_backend
from iotune.backends.base import SlabBackend
from iotune.core.errors import LoaderError, one_line
from iotune.core.processes import die_with_parent
from iotune.measuring.samples import Samples, batch_indices
from iotune.measuring.steady import consume, figures
from iotune.model.records import TrialTask
from iotune.model.spec import BatchSpec
from iotune.runner.placed import make_backend

MiB = 2**20
#: how a worker starts: never plain fork (see the module's docstring)
START_METHOD = "forkserver"
#: seconds a worker has to finish after being told to stop, before it is killed
STOP_GRACE_S = 5.0


def batch_spec(task: TrialTask) -> BatchSpec:
    """The trial's ``read.batches`` (defaults: one step of the first dimension per sample)."""
    return task.read.batches or BatchSpec(((task.workload.dims[0], 1),))


def read_batches(task: TrialTask, backend: SlabBackend, path: Path) -> dict[str, Any]:
    """Read one repeat of the batches pattern; the read entry without its cache keys.

    The loader is torch's ``DataLoader`` over the exported ``Dataset`` or iotune's own
    (:func:`iotune.runner.torch_loader.loader_of`); the entry says which (``loader``).

    Raises
    ------
    LoaderError
        A worker failed (its reason) or died (its exit code or signal), or workers
        were asked of a daemonic process, which may not start any.
    """
    from iotune.runner import torch_loader

    spec = batch_spec(task)
    loader = torch_loader.loader_of(task)
    workers = int(task.trial.params.get("num_workers") or 0)
    if workers and multiprocessing.current_process().daemon:
        # torch's and iotune's workers alike: a daemonic process may not start processes
        raise LoaderError(
            f"num_workers {workers} needs a trial process that may start processes; this one "
            "is daemonic (dask: set distributed.worker.daemon to false) - allowed: num_workers 0"
        )
    c0 = time.process_time()
    traffic: dict[str, Any] = {}
    if loader == "torch":
        source = torch_loader.torch_batches(task, path, spec)
    elif loader == "xbatcher":
        from iotune.runner.xbatcher_loader import xbatcher_batches

        source = xbatcher_batches(task, backend, path, spec)
    elif workers == 0:
        source = _in_process(task, backend, path, traffic)
    else:
        _start_server(task.trial.backend)  # untimed, as a user's interpreter is already up
        source = _with_workers(task, path)
    try:
        timeline = consume(source, spec.batches, spec.step)
    finally:
        source.close()  # stops the workers: after the timed span, as iterating ends in a loop
    entry = figures(timeline, spec.batch, spec.step)
    return traffic | entry | {"cpu_s": time.process_time() - c0, "loader": loader}


def _in_process(
    task: TrialTask, backend: SlabBackend, path: Path, traffic: dict[str, Any]
) -> Generator[int, None, None]:
    """``num_workers: 0``: the trial's process reads every batch; ``traffic``: its requests."""
    samples = Samples.of(task.workload, batch_spec(task))
    reader = backend.open_reader(path, task.workload, task.trial.params)
    try:
        for indices in batch_indices(task.workload, batch_spec(task)):
            batch = np.stack([reader.read(samples.selection(i)) for i in indices])
            yield batch.nbytes
            del batch  # as a training step drops its batch before the next
    finally:
        reader.close()
        traffic.update(reader.traffic() or {})


class _Pool:
    """The worker processes of one read, with a pipe each way per worker."""

    def __init__(self) -> None:
        self.procs: list[Any] = []
        self.jobs: list[connection.Connection] = []
        self.results: list[connection.Connection] = []

    def start(self, task: TrialTask, path: Path, workers: int) -> None:
        """Start ``workers`` processes reading ``path`` (stop them with :meth:`stop`)."""
        context: Any = multiprocessing.get_context(START_METHOD)
        for w in range(workers):
            jobs_out, jobs_in = context.Pipe(duplex=False)
            results_out, results_in = context.Pipe(duplex=False)
            proc = context.Process(
                target=work,
                args=(task, str(path), jobs_out, results_in),
                name=f"iotune-loader-{w}",
                daemon=True,
            )
            self.jobs.append(jobs_in)
            self.results.append(results_out)
            self.procs.append(proc)
            try:
                proc.start()
            finally:  # only the worker holds these ends: its exit then ends our side of the pipes
                jobs_out.close()
                results_in.close()

    def send(self, k: int, indices: list[int]) -> None:
        try:
            self.jobs[k % len(self.jobs)].send((k, indices))
        except OSError:  # its pipe is broken: the worker is gone
            raise LoaderError(self._died(k % len(self.jobs), k)) from None

    def receive(self, k: int) -> bytes:
        """Batch ``k``'s bytes, from the worker it went to."""
        w = k % len(self.procs)
        pipe, proc = self.results[w], self.procs[w]
        if not pipe.poll():
            connection.wait([pipe, proc.sentinel])
        try:
            header = pipe.recv()
            if header[0] == "ok":
                return pipe.recv_bytes()
        except (EOFError, OSError):
            raise LoaderError(self._died(w, k)) from None
        raise LoaderError(f"loader worker {w} failed on batch {k}: {header[2]}")

    def _died(self, w: int, k: int) -> str:
        proc = self.procs[w]
        proc.join(1.0)
        code = proc.exitcode
        how = f"exit code {code}"
        if code is not None and code < 0:
            how = (
                signal.Signals(-code).name if -code in signal.valid_signals() else f"signal {-code}"
            )
        return f"loader worker {w} (pid {proc.pid}) died ({how}) before delivering batch {k}"

    def stop(self, grace: float) -> None:
        """Tell every worker to stop, then kill those still running after ``grace`` seconds.

        Workers told to stop first finish the batches they were handed: after a
        failure (``grace`` 0) they are killed at once.
        """
        for jobs in self.jobs:
            with contextlib.suppress(OSError):  # that worker is gone already
                jobs.send(None)
            jobs.close()
        deadline = time.monotonic() + grace
        for proc in self.procs:
            if proc.pid is None:  # never started
                continue
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join()
        for pipe in self.results:
            pipe.close()


def _with_workers(task: TrialTask, path: Path) -> Generator[int, None, None]:
    """``num_workers > 0``: worker processes assemble batches, ``prefetch_factor`` each in flight.

    Each worker's requests stay in the worker: no traffic is reported.
    """
    batches = batch_indices(task.workload, batch_spec(task))
    workers = int(task.trial.params["num_workers"])
    prefetch = int(task.trial.params.get("prefetch_factor") or 2)
    pool, failed = _Pool(), True
    try:
        pool.start(task, path, workers)
        sent = min(prefetch * workers, len(batches))
        for k in range(sent):
            pool.send(k, batches[k])
        for k in range(len(batches)):
            data = pool.receive(k)
            yield len(data)
            del data
            if sent < len(batches):
                pool.send(sent, batches[sent])
                sent += 1
        failed = False
    except GeneratorExit:  # the consumer took what it needed, or was interrupted
        failed = False
        raise
    finally:
        pool.stop(0.0 if failed else STOP_GRACE_S)


def _start_server(backend: str) -> None:
    """Start the fork server with this module and the backend's library loaded (untimed).

    Once per process: the server imports them before it forks its first worker,
    so a first process is started and waited for here, outside any timed span.
    """
    global _SERVER_READY
    if _SERVER_READY:
        return
    cls = get_backend(backend)
    context: Any = multiprocessing.get_context(START_METHOD)
    context.set_forkserver_preload([__name__, cls.__module__, cls.library])
    probe = context.Process(target=_nothing, name="iotune-loader-start", daemon=True)
    probe.start()
    probe.join()
    _SERVER_READY = True


#: whether this process's fork server has started and loaded its modules
_SERVER_READY = False


def _nothing() -> None:
    """What the first process of a fork server runs: nothing (it is started to be waited for)."""


def work(task: TrialTask, path: str, jobs: Any, results: Any) -> None:
    """A worker: open the store once, then read each batch it is handed until told to stop."""
    die_with_parent()
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    sender = threading.Thread(target=_send, args=(outbox, results), daemon=True)
    sender.start()
    try:
        backend = make_backend(task)
        assert isinstance(backend, SlabBackend)
        reader = backend.open_reader(Path(path), task.workload, task.trial.params)
    except Exception as err:
        outbox.put(("error", -1, f"cannot open the store: {one_line(err)}"))
        outbox.put(None)
        sender.join()
        return
    samples = Samples.of(task.workload, batch_spec(task))
    try:
        _serve(jobs, reader, samples, outbox)
    finally:
        reader.close()
        outbox.put(None)
        sender.join()


def _serve(jobs: Any, reader: Any, samples: Samples, outbox: Any) -> None:
    while True:
        try:
            job = jobs.recv()
        except EOFError:  # the trial's process is gone
            return
        if job is None:
            return
        k, indices = job
        try:
            batch = np.stack([reader.read(samples.selection(i)) for i in indices])
        except Exception as err:
            outbox.put(("error", k, one_line(err)))
            return
        outbox.put(("ok", k, batch))


def _send(outbox: Any, results: Any) -> None:
    """The worker's sender thread: headers and batch bytes to the trial, in order."""
    while True:
        item = outbox.get()
        if item is None:
            return
        try:
            if item[0] == "ok":
                results.send(("ok", item[1]))
                results.send_bytes(item[2])
            else:
                results.send(item)
        except OSError:  # the trial stopped reading: nothing left to deliver to
            return
