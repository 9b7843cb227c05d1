"""Optional parts of iotune and the one-line error when one is missing.

The core (``pip install iotune``) measures netCDF4, HDF5, Zarr and POSIX on one
machine or a dask cluster.  MPI, the Jupyter tools, adaptive search, Darshan
logs and dask-jobqueue are extras, so an HPC user can build mpi4py against the
system's MPI instead of taking a wheel's.

The command that installs an extra fits how iotune was installed: from a clone
(an editable or local-directory install, which the distribution's PEP 610
``direct_url.json`` records) ``pip install 'iotune[search]'`` would fetch a
released iotune over the clone's, so the hint names the clone.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from pathlib import Path
from urllib.parse import unquote, urlparse

from iotune.core.errors import MissingExtraError

__all__ = ["EXTRAS", "MissingExtraError", "install_hint", "installed", "missing", "require"]

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
    "virtual": "virtualizarr, kerchunk, icechunk, fastparquet (the virtual backend's references)",
    "xbatcher": "xbatcher (read.batches.loader: xbatcher)",
}


def installed(module: str) -> bool:
    """Whether ``module`` can be imported here, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken __spec__
        return False


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'iotune[search]'``, or the clone's.

    A clone installed with ``pip install -e /path`` (or ``pip install /path``) gets
    ``pip install -e '/path[search]'`` (or without ``-e``); the mpi extra also names
    the MPICH wheel for laptops.
    """
    clone = _clone()
    if clone is None:
        hint = f"pip install 'iotune[{extra}]'"
        laptop = "'iotune[mpich]'"
    else:
        path, editable = clone
        hint = f"pip install {'-e ' if editable else ''}'{path}[{extra}]'"
        laptop = f"'{path}[mpich]'"
    return f"{hint} (or {laptop} on a laptop)" if extra == "mpi" else hint


def _clone() -> tuple[str, bool] | None:
    """The directory iotune was installed from and whether editably; None: an index's."""
    try:
        text = importlib.metadata.distribution("iotune").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:  # a source tree on sys.path, not installed
        return None
    try:
        found = json.loads(text or "{}")
    except ValueError:  # a broken record says nothing about where iotune came from
        return None
    url = urlparse(str(found.get("url", "")))
    if url.scheme != "file" or "dir_info" not in found:
        return None
    path = Path(unquote(url.path))
    if not path.is_dir():  # the clone is gone: only the index can install the extra now
        return None
    return str(path), bool(found["dir_info"].get("editable"))


def missing(module: str, *, extra: str) -> str:
    """``needs optuna (pip install 'iotune[search]')``; empty when ``module`` is installed.

    For what a command leaves out without an extra, beside what it still does.
    """
    if installed(module):
        return ""
    return f"needs {module} ({install_hint(extra)})"


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
        raise MissingExtraError(feature, module, extra, hint=install_hint(extra))
