"""The object-store backends' knobs, declared once with the clients' defaults.

Each backend has its own knobs (how it talks to the store) and, when it stores
a format, the knobs of the library that writes it: ``zarr-object`` takes
zarr's (its ``request_concurrency`` is zarr's ``async.concurrency`` with a
default of its own), ``hdf5-object`` and ``netcdf4-object`` take those of h5py
and netCDF4 that apply to one file written by one process and read through a
file object.  :func:`~iotune.backends.knobs.combined` puts them in the order
of the backends' ``parameters``: the library's, then the store's.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.backends.h5py.knobs import H5pyKnobs
from iotune.backends.knobs import Knobs, combined
from iotune.backends.mpiio.knobs import MpiioKnobs
from iotune.backends.netcdf4.knobs import NetCDF4Knobs
from iotune.backends.zarr.knobs import ZarrKnobs

MiB = 2**20


@dataclass(frozen=True)
class RawObjectKnobs(Knobs):
    """The raw object backend's knobs: obstore's PUT in parts and ranged GETs."""

    part_size: int = 8 * MiB
    request_concurrency: int = 8
    #: obstore's ``get_ranges`` merges ranges less than this apart
    coalesce: int = MiB


@dataclass(frozen=True)
class ZarrStoreKnobs(Knobs):
    """How zarr reaches the object store: the client, requests in flight, metadata."""

    client: str = "obstore"
    #: zarr's own ``async.concurrency`` default
    request_concurrency: int = 10
    consolidated: str = "off"


@dataclass(frozen=True)
class UploadedFileKnobs(Knobs):
    """An HDF5 file's upload and its reads through an fsspec file object.

    s3fs's own defaults, except the upload's concurrency (s3fs: one part at a time).
    """

    cache_type: str = "readahead"
    read_block_size: int = 5 * MiB
    part_size: int = 50 * MiB
    request_concurrency: int = 8


#: the local libraries' knobs that do not apply to a file on an object store: the
#: parallel ones (one process writes the file), and HDF5's sieve buffer, which iotune
#: sets through a file access property list on a path
NOT_ON_OBJECTS = (*MpiioKnobs.names(), "sieve_buf_size")

ZarrObjectKnobs = combined(
    "ZarrObjectKnobs",
    ZarrKnobs,
    ZarrStoreKnobs,
    module=__name__,
    doc="zarr-object's knobs: zarr's, then how it reaches the store.",
)
Hdf5ObjectKnobs = combined(
    "Hdf5ObjectKnobs",
    H5pyKnobs,
    UploadedFileKnobs,
    without=NOT_ON_OBJECTS,
    module=__name__,
    doc="hdf5-object's knobs: h5py's for one serial file, then the upload's and reads'.",
)
Netcdf4ObjectKnobs = combined(
    "Netcdf4ObjectKnobs",
    NetCDF4Knobs,
    UploadedFileKnobs,
    without=NOT_ON_OBJECTS,
    module=__name__,
    doc="netcdf4-object's knobs: netCDF4's for one serial file, then the upload's and reads'.",
)
