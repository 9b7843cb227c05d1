"""Run trials on a dask cluster: a LocalCluster, a scheduler address or dask-jobqueue.

Figures stay uncontended: at most ``per_host`` storage-bound trials run on a
host at a time (placement by host, so parallelism comes from more hosts);
CPU-bound trials (the in-memory codec backend) fill every worker.  A worker
that dies mid-trial has its trial retried once on another worker of the same
host; if that dies too, the trial is recorded as failed and the sweep goes on.
"""

from __future__ import annotations

import importlib
import logging
import shutil
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from iotune.core.errors import ClusterError
from iotune.executors.base import Executor
from iotune.executors.environ import WORKER_ENVIRON, adaptive_malloc_thresholds
from iotune.executors.jobqueue import jobqueue_cluster
from iotune.model.records import TrialResult, TrialTask
from iotune.runner.trial import run_trial_captured

logger = logging.getLogger(__name__)

ALLOWED_FAILURES = 1  # one retry after a worker death, then the trial is failed
#: a LocalCluster of the sweep's own that has had no worker for this long gets its
#: workers again: dask closes a nanny whose worker failed to start again (a restart
#: that timed out on a busy machine), and nothing else starts it
WORKERLESS_REVIVE_S = 30.0
#: with no worker for this long the sweep stops (ClusterError), keeping what it measured
WORKERLESS_LIMIT_S = 300.0
#: how long a LocalCluster's start waits for all its workers after the first one
ALL_WORKERS_S = 120.0
#: how often the cluster's workers are counted while a trial runs
WORKER_CHECK_S = 5.0


class PrepareBackends(WorkerPlugin):
    """Worker plugin: fix up each worker process before any backend library loads."""

    name = "iotune-prepare-backends"

    def setup(self, worker: Any) -> None:
        from iotune.backends import backend_names, get_backend

        adaptive_malloc_thresholds()

        for name in backend_names():
            get_backend(name).prepare_process()
        # what every trial needs (NumPy, the measuring code) loads once, here, while the
        # cluster starts, not inside the first trial of each worker
        importlib.import_module("iotune.runner.trial")


class DaskExecutor(Executor):
    """Trials as dask tasks.

    Parameters
    ----------
    workers
        Worker processes of the LocalCluster (one thread each).
    scheduler
        Address of an existing scheduler; no cluster is started.
    cluster
        dask-jobqueue settings (``kind``: slurm or pbs, cores, processes, memory,
        walltime, queue, account, job_extra_directives, job_script_prologue,
        interface, python, local_directory, log_directory, jobs); see
        :func:`jobqueue_options`.
    per_host
        Storage-bound trials allowed at once on one host.
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        scheduler: str | None = None,
        cluster: Mapping[str, Any] | None = None,
        per_host: int = 1,
    ) -> None:
        import dask

        self.per_host = per_host
        self._cluster = None
        self._local_workers = 0 if scheduler or cluster else workers or 2
        self._running: dict[Any, tuple[TrialTask, str | None, float]] = {}
        self._most = 0
        self._counted = (0.0, 0)  # (when, workers): see _slots
        # held until close, not only while the cluster starts: a worker the nanny restarts
        # (after a death, or restart_workers) reads distributed.worker.daemon again
        self._config = dask.config.set(
            {
                "distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
                "distributed.nanny.pre-spawn-environ": WORKER_ENVIRON,
                # so a trial may start processes of its own (the batches pattern's loader
                # workers); they end with it, and its own end with the nanny's kill
                "distributed.worker.daemon": False,
            }
        )
        try:
            self.client, self._cluster = _connect(scheduler, cluster, workers)
        except BaseException:
            self._config.__exit__(None, None, None)  # the process's dask config as it was
            raise
        self.client.register_plugin(PrepareBackends())
        self._wait_for_workers(self._local_workers or 1)

    def _wait_for_workers(self, n: int) -> None:
        """Wait for the first worker, then for ``n`` (a LocalCluster's own, so trials are
        not farmed out to too few); one missing after :data:`ALL_WORKERS_S` is logged."""
        self.client.wait_for_workers(1, timeout=600)
        try:
            self.client.wait_for_workers(n, timeout=ALL_WORKERS_S)
        except TimeoutError:
            had = len(self.client.scheduler_info()["workers"])
            logger.warning("dask: %d of %d workers came in %.0f s", had, n, ALL_WORKERS_S)

    def describe(self) -> str:
        n = len(self.client.scheduler_info()["workers"])
        return (
            f"dask: {n} workers, at most {self.per_host} storage trial(s) per host; "
            f"dashboard {self.client.dashboard_link}"
        )

    def _hosts(self) -> list[str]:
        info = self.client.scheduler_info()["workers"].values()
        return sorted({w["host"] for w in info})

    def map(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        from distributed import as_completed

        from iotune.backends import get_backend

        pending = deque(tasks)
        busy: dict[str, int] = {}
        running = as_completed()
        meta: dict[Any, tuple[TrialTask, str | None, float]] = {}
        self._running = meta

        def fill() -> None:
            cost = self._longest_first(pending)
            cpu_slots = self._slots()
            for _ in range(len(pending)):
                task = pending.popleft()
                host = None
                if get_backend(task.trial.backend).io_bound:
                    host = next((h for h in self._hosts() if busy.get(h, 0) < self.per_host), None)
                    if host is None:
                        pending.append(task)
                        continue
                    busy[host] = busy.get(host, 0) + 1
                elif sum(1 for t, h, _ in meta.values() if h is None) >= cpu_slots:
                    # one CPU trial per worker: a second one queued behind a long trial
                    # on its worker would wait there while other workers idle
                    pending.append(task)
                    continue
                where = {"workers": [host], "allow_other_workers": False} if host else {}
                future = self.client.submit(
                    run_trial_captured, task, pure=False, priority=cost(task), **where
                )
                meta[future] = (task, host, time.time())
                running.add(future)

        fill()
        while meta or pending:
            if not meta:
                # no worker to place a trial on: jobs still queued, or every worker
                # restarting after a death; leaving now would drop the pending trials
                self._wait_for_a_worker()
                fill()
                if not meta:
                    time.sleep(0.1)  # the worker left again before it got a trial
                continue
            future = self._next_done(running)
            task, host, started = meta.pop(future)
            if host is not None:
                busy[host] -= 1
            result = _outcome(future, task, started)
            if self.expected is not None:
                self.expected.observe(task, result)
            if result.poisoned:  # only the process's exit frees what the library holds
                self._restart_holder(future)
            yield result
            fill()

    def _longest_first(self, pending: deque[TrialTask]) -> Callable[[TrialTask], int]:
        """Sort ``pending`` longest expected first; return the scheduler priority of a task.

        Only what is pending is reordered (a round of interleaved repeats stays a
        round); the priority orders the few tasks queued on the scheduler alike.
        Without an estimate the order is the caller's.
        """
        expected = self.expected
        if expected is None:
            return lambda task: 0
        seconds = {id(task): expected.seconds(task) for task in pending}
        ordered = sorted(pending, key=lambda task: -seconds[id(task)])
        pending.clear()
        pending.extend(ordered)
        # dask wants an integer: milliseconds keep the order of tasks a few ms apart
        return lambda task: round(1000 * seconds.get(id(task), 0.0))

    def _slots(self) -> int:
        """Workers there now (counted again at most every second: workers join late)."""
        now = time.monotonic()
        if now - self._counted[0] > 1.0:
            self._counted = (now, max(1, len(self.client.scheduler_info()["workers"])))
            self._most = max(self._most, self._counted[1])
        return self._counted[1]

    def workers(self) -> int:
        """The most workers the cluster had when tasks were handed out."""
        return self._most or len(self.client.scheduler_info()["workers"])

    def _wait_for_a_worker(self) -> None:
        """Block until a worker is there; a LocalCluster of the sweep's own is revived.

        A cluster someone else runs, or dask-jobqueue's, may wait for queued jobs.
        """
        if self._cluster is None or not self._local_workers:
            self.client.wait_for_workers(1, timeout=3600)
            return
        workerless = time.monotonic()
        while not self.client.scheduler_info()["workers"]:
            self._revive_or_stop(workerless)
            time.sleep(min(WORKER_CHECK_S, 1.0))

    def _revive_or_stop(self, workerless: float) -> None:
        """No worker since ``workerless``: start them again, or stop after the limit."""
        waited = time.monotonic() - workerless
        if waited > WORKERLESS_LIMIT_S:
            raise ClusterError(
                f"the dask cluster has had no worker for {WORKERLESS_LIMIT_S:.0f} s; "
                "finished trials are kept: rerun with --resume"
            )
        if waited > WORKERLESS_REVIVE_S and self._cluster is not None:
            logger.warning("dask: the cluster lost every worker; starting them again")
            self._cluster.scale(self._local_workers)

    def _next_done(self, running: Any) -> Any:
        """The next finished trial's future; a LocalCluster left with no worker is revived.

        Waits as ``next(running)`` does (on the condition ``as_completed`` notifies), so
        a finished trial is seen at once; between waits the workers are counted.
        """
        workerless, checked = None, time.monotonic()
        while not running.has_ready():
            with running.thread_condition:
                running.thread_condition.wait(timeout=0.1)
            now = time.monotonic()
            if self._cluster is None or not self._local_workers or now - checked < WORKER_CHECK_S:
                continue
            checked = now
            if self.client.scheduler_info()["workers"]:
                workerless = None
                continue
            workerless = workerless or now
            self._revive_or_stop(workerless)
        return next(running)

    def _restart_holder(self, future: Any) -> None:
        workers = self.client.who_has([future]).get(future.key, ())
        future.release()
        if workers:
            self.client.restart_workers(list(workers), timeout=120)

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._config.__exit__(None, None, None)

    def abort(self) -> None:
        """Cancel the sweep's tasks and stop the worker processes that run them.

        A cluster of the sweep's own (LocalCluster, dask-jobqueue) is closed,
        which ends its worker processes and jobs.  On a scheduler someone else
        runs, the workers are restarted (a running task cannot be stopped any
        other way) and the sweep's scratch is removed on every one of them.
        """
        tasks = [task for task, _host, _started in self._running.values()]
        self.client.cancel(list(self._running), force=True)
        if self._cluster is None and tasks:
            self.client.restart(timeout=120, wait_for_workers=False)
            for scratch in {task.scratch for task in tasks}:
                self.client.run(shutil.rmtree, scratch, True)
        self.close()


def _outcome(future: Any, task: TrialTask, started: float) -> TrialResult:
    from distributed import KilledWorker

    try:
        return future.result()
    except KilledWorker:
        why = (
            f"worker process died during the trial {ALLOWED_FAILURES + 1} times "
            "(killed, out of memory or a crash in the library)"
        )
    except Exception as err:  # the task itself never raises; this is the cluster failing
        why = f"{type(err).__name__}: {' '.join(str(err).split())}"
    return TrialResult(task.trial.id, "failed", why, started=started, ended=time.time())


def _connect(
    scheduler: str | None, cluster: Mapping[str, Any] | None, workers: int | None
) -> tuple[Any, Any]:
    """The client, and the cluster of the sweep's own (None on someone's scheduler)."""
    from distributed import Client, LocalCluster

    if scheduler:
        return Client(scheduler), None
    made = (
        jobqueue_cluster(cluster)
        if cluster
        else LocalCluster(
            n_workers=workers or 2, threads_per_worker=1, processes=True, dashboard_address=":0"
        )
    )
    return Client(made), made
