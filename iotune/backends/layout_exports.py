"""The chunk-and-codec exports every chunked format offers, whichever measured the layout.

A layout (chunks, codec, filters) measured in one format is written alike in the
others: xarray encodings for netCDF4 and Zarr, netCDF4-python, and the ``nccopy``
and ``h5repack`` commands that rewrite an existing file.  The formats without
chunks or codecs (posix, object) do not offer them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Makers, Target, command
from iotune.backends.h5py import exports as h5py_exports
from iotune.backends.netcdf4 import exports as netcdf4_exports
from iotune.backends.zarr import exports as zarr_exports

PLUGIN_NOTE = (
    "filters other than deflate and shuffle need their HDF5 plugin on HDF5_PLUGIN_PATH, "
    "e.g. export HDF5_PLUGIN_PATH=$(python -c 'import hdf5plugin; print(hdf5plugin.PLUGIN_PATH)')"
)


def layout_makers(settings: Mapping[str, Any], target: Target) -> Makers:
    """The xarray, netCDF4-python, nccopy and h5repack exports of a point's layout."""
    nc, zarr = netcdf4_exports, zarr_exports
    return {
        "xarray_netcdf4_encoding": lambda: nc.xarray_netcdf4_export(settings, target),
        "xarray_zarr_encoding": lambda: {
            "text": zarr.zarr_encoding_code(settings, target),
            "value": zarr.xarray_zarr_encoding(settings, target),
        },
        "netcdf4_create_variable": lambda: {
            "text": nc.netcdf4_code(settings, target),
            "value": nc.netcdf4_create_variable(settings, target),
        },
        "nccopy": lambda: command(["nccopy", *nc.nccopy_args(settings, target), "in.nc", "out.nc"]),
        "h5repack": lambda: command(
            ["h5repack", *h5py_exports.h5repack_args(settings, target), "in.h5", "out.h5"]
        ),
    }
