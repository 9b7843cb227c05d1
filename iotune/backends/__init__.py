"""Format backends, found by name and imported only when used.

Third-party formats register under the ``iotune.backends`` entry point group
(:mod:`iotune.plugins`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iotune.plugins import load, registry

if TYPE_CHECKING:
    from iotune.backends.base import Backend

GROUP = "iotune.backends"
#: iotune's own formats; plugins add theirs through entry points
BUILTINS: dict[str, str] = {
    "netcdf4": "iotune.backends.netcdf4_:NetCDF4Backend",
    "h5py": "iotune.backends.h5py_:H5pyBackend",
    "zarr": "iotune.backends.zarr_:ZarrBackend",
    "posix": "iotune.backends.posix:PosixBackend",
    "memory": "iotune.backends.memory:MemoryBackend",
    "mpiio": "iotune.backends.mpiio:MpiioBackend",
    "object": "iotune.backends.object_:RawObjectBackend",
    "zarr-object": "iotune.backends.zarr_object:ZarrObjectBackend",
    "hdf5-object": "iotune.backends.hdf5_object:Hdf5ObjectBackend",
}


def backend_names() -> tuple[str, ...]:
    """Names of every registered backend: the built-ins, then installed plugins."""
    return tuple(registry(GROUP, BUILTINS))


def get_backend(name: str) -> type[Backend]:
    """Return the backend class registered as ``name``.

    Raises
    ------
    UsageError
        ``name`` is not registered (the message lists the valid choices), or
        its plugin does not import.
    """
    return load(GROUP, name, BUILTINS)
