"""Which MPI library the mpiio backend will use, asked in a child process.

Importing ``mpi4py.MPI`` initialises MPI; a child keeps the CLI and notebook
processes free of it (and of a broken MPI's abort).
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

from iotune.core.extras import installed

_ASK = (
    "from mpi4py import MPI; print(' '.join(MPI.Get_library_version().strip().splitlines()[0]"
    ".split()))"
)


def describe_mpi(*, timeout: float = 30.0) -> str:
    """One line naming the MPI library mpi4py is linked against, and where it came from.

    Returns
    -------
    str
        e.g. ``MPICH Version: 4.3.0 (the mpich wheel 4.3.0)`` or, without mpi4py,
        how to install it.
    """
    if not installed("mpi4py"):
        return (
            "no mpi4py: pip install 'iotune[mpi]' built against the system MPI "
            "(MPICC=mpicc pip install --no-binary mpi4py mpi4py), or 'iotune[mpich]' on a laptop"
        )
    try:
        done = subprocess.run(
            [sys.executable, "-c", _ASK], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return f"mpi4py did not answer within {timeout:.0f} s (MPI_Init hangs?)"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"mpi4py cannot initialise MPI: {last}"
    return f"{done.stdout.strip()} ({_origin()})"


def _origin() -> str:
    try:
        return f"the mpich wheel {importlib.metadata.version('mpich')}"
    except importlib.metadata.PackageNotFoundError:
        return "the system's MPI, which mpi4py was built against"
