"""Format backends, found by name and imported only when used."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from iotune.errors import UsageError

if TYPE_CHECKING:
    from iotune.backends.base import Backend

_REGISTRY: dict[str, str] = {
    "netcdf4": "iotune.backends.netcdf4_:NetCDF4Backend",
    "h5py": "iotune.backends.h5py_:H5pyBackend",
    "zarr": "iotune.backends.zarr_:ZarrBackend",
    "posix": "iotune.backends.posix:PosixBackend",
    "memory": "iotune.backends.memory:MemoryBackend",
    "mpiio": "iotune.backends.mpiio:MpiioBackend",
}


def backend_names() -> tuple[str, ...]:
    """Names of every registered backend."""
    return tuple(_REGISTRY)


def get_backend(name: str) -> type[Backend]:
    """Return the backend class registered as ``name``.

    Raises
    ------
    UsageError
        ``name`` is not registered; the message lists the valid choices.
    """
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise UsageError(f"unknown backend {name!r}; allowed: {', '.join(_REGISTRY)}") from None
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)
