"""The environment of the worker processes iotune starts.

Kept free of heavy imports: a spawned worker runs :func:`prepare_worker`
before NumPy is imported, which is when OpenBLAS decides on its threads.
"""

from __future__ import annotations

import os

#: One BLAS/OpenMP thread: the synthetic field is generated with BLAS calls
#: whose idle threads spin afterwards and steal a core from a concurrent
#: trial.  dask's default environment also sets ``MALLOC_TRIM_THRESHOLD_``,
#: which turns off glibc's adaptive mmap threshold: every codec buffer is then
#: a fresh mmap, page-faulted and zeroed, which slowed compression trials by
#: about 17 % and is not what applications see; iotune leaves it out.
WORKER_ENVIRON = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def prepare_worker(backend: str) -> None:
    """Runs first in a fresh worker: thread limits, then the backend's own fix-ups."""
    for key, value in WORKER_ENVIRON.items():
        os.environ.setdefault(key, value)  # a user's explicit choice wins
    from iotune.backends import get_backend

    get_backend(backend).prepare_process()
