"""The environment of the worker processes iotune starts.

Kept free of heavy imports: a spawned worker runs :func:`prepare_worker`
before NumPy is imported, which is when OpenBLAS decides on its threads.
"""

from __future__ import annotations

import ctypes
import os
import signal

#: One BLAS/OpenMP thread: the synthetic field is generated with BLAS calls
#: whose idle threads spin afterwards and steal a core from a concurrent
#: trial.  dask's default environment also sets ``MALLOC_TRIM_THRESHOLD_``,
#: which turns off glibc's adaptive mmap threshold: every codec buffer is then
#: a fresh mmap, page-faulted and zeroed, which slowed compression trials by
#: about 17 % and is not what applications see; iotune leaves it out.
WORKER_ENVIRON = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Have the kernel kill this worker when the sweep process dies (Linux).

    A worker blocked on its task pipe would otherwise outlive a ``kill -9``
    of the sweep for ever, holding its scratch files open.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return  # not Linux: the worker ends when its pipe breaks, as before
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


def prepare_worker(backend: str) -> None:
    """Runs first in a fresh worker: thread limits, then the backend's own fix-ups."""
    die_with_parent()
    for key, value in WORKER_ENVIRON.items():
        os.environ.setdefault(key, value)  # a user's explicit choice wins
    from iotune.backends import get_backend

    get_backend(backend).prepare_process()
