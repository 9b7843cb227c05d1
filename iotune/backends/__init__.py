"""Format backends, found by name and imported only when used.

Third-party formats register under the ``iotune.backends`` entry point group
(:mod:`iotune.core.plugins`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iotune.core.plugins import load, registry

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from iotune.backends.base import Backend
    from iotune.model.readers import Readability

GROUP = "iotune.backends"
#: iotune's own formats; plugins add theirs through entry points
BUILTINS: dict[str, str] = {
    "netcdf4": "iotune.backends.netcdf4.backend:NetCDF4Backend",
    "h5py": "iotune.backends.h5py.backend:H5pyBackend",
    "zarr": "iotune.backends.zarr.backend:ZarrBackend",
    "posix": "iotune.backends.posix.backend:PosixBackend",
    "memory": "iotune.backends.memory.backend:MemoryBackend",
    "mpiio": "iotune.backends.mpiio.backend:MpiioBackend",
    "object": "iotune.backends.object.raw:RawObjectBackend",
    "zarr-object": "iotune.backends.object.zarr:ZarrObjectBackend",
    "hdf5-object": "iotune.backends.object.hdf5:Hdf5ObjectBackend",
    "netcdf4-object": "iotune.backends.object.hdf5:Netcdf4ObjectBackend",
    "virtual": "iotune.backends.virtual.backend:VirtualBackend",
    "icechunk": "iotune.backends.icechunk.backend:IcechunkBackend",
    "inplace": "iotune.backends.inplace.backend:InplaceBackend",
}


#: the backend a spec without ``backend`` measures
DEFAULT_BACKEND = "netcdf4"

#: the built-in that reproduces what each Darshan module counted (``iotune darshan``'s spec)
DARSHAN_MODULES = {"POSIX": "posix", "MPIIO": "mpiio", "H5D": "h5py"}


#: the built-ins that store objects on the sweep's ``storage`` (named here so that checking
#: a spec imports no backend module)
OBJECT_BUILTINS = ("object", "zarr-object", "hdf5-object", "netcdf4-object")


def on_object_storage(name: str) -> bool:
    """Whether backend ``name`` stores objects on an object store (``storage.url``)."""
    if name in BUILTINS:
        return name in OBJECT_BUILTINS
    return bool(getattr(get_backend(name), "object_storage", False))


#: the built-ins whose stored array xarray opens (``SlabBackend.open_dataset``); posix,
#: memory and mpiio store bytes without the names and shape a Dataset needs
XARRAY_BUILTINS = (
    *("netcdf4", "h5py", "zarr", "zarr-object", "hdf5-object", "netcdf4-object", "virtual"),
    "icechunk",
    "inplace",
)


#: the built-ins whose ``guess_can_open`` may say yes: stores that are neither a netCDF/HDF5
#: file nor a plain Zarr directory (``iotune apply`` opens them through the format)
OPENER_BUILTINS = ("icechunk",)


def opener_of(path: Path) -> type[Backend] | None:
    """The backend whose ``guess_can_open(path)`` says yes (a built-in first, then a plugin
    that has one), or None: a file or store the conversion's own readers open.

    Such a backend also has ``open_source(path)``: the store as an undecoded
    ``xarray.Dataset`` (``iotune apply``'s source, or its finished target read back).
    """
    plugins = [n for n in backend_names() if n not in BUILTINS]
    for name in (*OPENER_BUILTINS, *plugins):
        backend = get_backend(name)
        guess = getattr(backend, "guess_can_open", None)
        if guess is not None and guess(path):
            return backend
    return None


def opens_with_xarray(name: str) -> bool:
    """Whether backend ``name`` implements ``open_dataset`` (an xarray Dataset of its array)."""
    if name in BUILTINS:
        return name in XARRAY_BUILTINS
    from iotune.backends.base import SlabBackend

    cls = get_backend(name)
    return issubclass(cls, SlabBackend) and cls.open_dataset is not SlabBackend.open_dataset


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


def readability(settings: Mapping[str, Any]) -> Readability:
    """Who opens what ``settings`` store (``backend``, ``codec``) as is, who needs a plugin.

    A format that declares no readers (raw bytes) gives an empty :class:`Readability`.
    """
    from iotune.model.readers import Readability

    readers = get_backend(str(settings["backend"])).readers
    codec = str(settings.get("codec") or "none")
    return Readability.of(codec, readers) if readers else Readability(codec)


def reader_names() -> tuple[str, ...]:
    """Every reader the registered formats declare, once each, in their order."""
    names = (n for b in backend_names() for g in get_backend(b).readers for n in g.names)
    return tuple(dict.fromkeys(names))
