"""The inplace backend's knobs, declared once with the library's defaults.

The base class and the rules: :mod:`iotune.backends.knobs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.backends.knobs import Knobs


@dataclass(frozen=True)
class InplaceKnobs(Knobs):
    """How the user opens the source: xarray's engine and the dask read."""

    #: xarray's engine for the source (xarray picks netcdf4 first when both are installed)
    engine: str = "netcdf4"
    dask_chunks: str | None = None
    dask_threads: int | None = None
