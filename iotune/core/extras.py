"""Optional parts of iotune and the one-line error when one is missing.

The core (``pip install iotune``) measures netCDF4, HDF5, Zarr and POSIX on one
machine or a dask cluster.  MPI, the Jupyter tools, adaptive search, Darshan
logs and dask-jobqueue are extras, so an HPC user can build mpi4py against the
system's MPI instead of taking a wheel's.
"""

from __future__ import annotations

import importlib.util

from iotune.core.errors import MissingExtraError

__all__ = ["EXTRAS", "MissingExtraError", "installed", "require"]

#: extra -> what it brings, for the messages and ``iotune backends``
EXTRAS: dict[str, str] = {
    "mpi": "mpi4py (build it against the system MPI: MPICC=mpicc pip install --no-binary "
    "mpi4py mpi4py)",
    "mpich": "mpi4py and the MPICH wheel (laptops, Binder, CI)",
    "jupyter": "jupyterlab, ipywidgets, papermill",
    "search": "optuna",
    "darshan": "darshan (pydarshan)",
    "jobqueue": "dask-jobqueue",
    "objectstore": "obstore and s3fs (storage.url: S3, GCS, Azure)",
}


def installed(module: str) -> bool:
    """Whether ``module`` can be imported here, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken __spec__
        return False


def require(module: str, *, extra: str, feature: str) -> None:
    """Raise :class:`MissingExtraError` unless ``module`` is importable.

    Parameters
    ----------
    module
        The top-level module the feature imports.
    extra
        The extra that installs it (a key of :data:`EXTRAS`).
    feature
        What the user asked for, named as they would: ``iotune tune``.
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    if not installed(module):
        raise MissingExtraError(feature, module, extra)
