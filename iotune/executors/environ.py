"""The environment of the worker processes iotune starts.

Kept free of heavy imports: a spawned worker runs :func:`prepare_worker`
before NumPy is imported, which is when OpenBLAS decides on its threads.
"""

from __future__ import annotations

import ctypes
import os

from iotune.core.processes import die_with_parent, lead_group

#: One BLAS/OpenMP thread: the synthetic field is generated with BLAS calls
#: whose idle threads spin afterwards and steal a core from a concurrent
#: trial.  dask's default environment also sets ``MALLOC_TRIM_THRESHOLD_``,
#: which turns off glibc's adaptive mmap threshold: every codec buffer is then
#: a fresh mmap, page-faulted and zeroed, which slowed compression trials by
#: about 17 % and is not what applications see; iotune leaves it out, and
#: :func:`adaptive_malloc_thresholds` undoes it in workers dask started itself.
WORKER_ENVIRON = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc <malloc.h>
#: Where glibc's adaptive mmap threshold tops out on 64-bit systems
#: (DEFAULT_MMAP_THRESHOLD_MAX); it trims at twice the threshold.
MMAP_THRESHOLD_MAX = 32 * 2**20


def adaptive_malloc_thresholds() -> bool:
    """Give back glibc the thresholds a fixed ``MALLOC_TRIM_THRESHOLD_`` took away.

    Workers that dask starts itself (dask-jobqueue jobs, a scheduler the user
    runs) get dask's default ``MALLOC_TRIM_THRESHOLD_``, which freezes the mmap
    threshold at 128 KiB, so every large buffer is a fresh, page-faulted mmap.
    This sets the thresholds where the adaptive ones end up for buffers of up
    to 32 MiB.  A ``MALLOC_MMAP_THRESHOLD_`` in the environment is the user's
    own choice and is left alone.

    Returns
    -------
    bool
        Whether the thresholds were changed.
    """
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False  # not glibc: nothing to undo
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(
        mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX)
        and mallopt(M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLD_MAX)
    )


def prepare_worker(backend: str) -> None:
    """Runs first in a fresh worker: its lifetime, thread limits, the backend's fix-ups."""
    die_with_parent()
    lead_group()
    for key, value in WORKER_ENVIRON.items():
        os.environ.setdefault(key, value)  # a user's explicit choice wins
    from iotune.backends import get_backend
    from iotune.core.logs import configure

    configure(0)  # a trial's warnings (striping not applied) as the CLI's "iotune: ..." lines

    get_backend(backend).prepare_process()
