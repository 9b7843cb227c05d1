"""The netcdf4 backend's knobs, declared once with the library's defaults.

The base class and the rules: :mod:`iotune.backends.knobs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.backends.knobs import LayoutKnobs


@dataclass(frozen=True)
class NetCDF4Knobs(LayoutKnobs):
    """netCDF4-python's knobs (netCDF-C over HDF5)."""

    chunk_cache: int | None = None
    nprocs: int = 1
    fill: str = "on"
    format: str = "NETCDF4"
    quantize: str = "off"
    alignment: int | None = None
    #: netCDF-C and HDF5 align every block of at least this many bytes
    alignment_threshold: int = 1
    cache_slots: int | None = None
    cache_preemption: float | None = None
    dask_chunks: str | None = None
    dask_threads: int | None = None
