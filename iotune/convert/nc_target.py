"""A netCDF4 target written through netCDF4-python: raw values, own attributes, slab by slab.

Auto masking and scaling are off on the target, so the stored values of the source
are written as they are; ``_FillValue`` is given at creation (netCDF requires it),
every other attribute is copied after.  Unlimited dimensions stay unlimited.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from iotune.convert.layout import Layout
from iotune.convert.source import Source, own_encoding
from iotune.core.errors import UsageError
from iotune.model.codecs import netcdf4_encoding
from iotune.model.quantize import netcdf4_kwargs


class NetcdfTarget:
    """The partial target file at ``path``, created or reopened for appending."""

    def __init__(self, path: Path, *, mode: Literal["w", "a"]) -> None:
        import netCDF4

        self.path = path
        self.nc = netCDF4.Dataset(path, mode, format="NETCDF4")
        self.nc.set_auto_maskandscale(False)

    @classmethod
    def create(
        cls,
        path: Path,
        source: Source,
        layout: Layout,
        converted: Sequence[str],
        *,
        by_region: set[str],
    ) -> NetcdfTarget:
        """Dimensions, variables and attributes; no values (see :mod:`iotune.convert.blocks`)."""
        target = cls(path, mode="w")
        ds, nc = source.ds, target.nc
        for dim, length in ds.sizes.items():
            nc.createDimension(str(dim), None if dim in source.unlimited else length)
        for name, var in ds.variables.items():
            keywords = _encoding(var, layout) if name in converted else own_encoding(var)
            if name not in converted and len(var.dims) == 0:
                keywords = {}
            attrs = dict(var.attrs)
            fill = attrs.pop("_FillValue", None)
            made = nc.createVariable(
                str(name),
                var.dtype.newbyteorder("="),
                tuple(map(str, var.dims)),
                fill_value=fill,
                **keywords,
            )
            made.set_auto_maskandscale(False)
            made.setncatts(attrs)
        nc.setncatts(dict(ds.attrs))
        nc.sync()
        return target

    def write(self, name: str, start: int, stop: int, values: np.ndarray) -> None:
        var = self.nc[name]
        if var.ndim == 0:
            var[...] = values
        else:
            var[start:stop] = values

    def write_block(self, name: str, index: tuple[slice, ...], values: np.ndarray) -> None:
        """Write ``values`` at ``index`` (one slice per dimension) of variable ``name``."""
        self.nc[name][index] = values

    def read_block(self, name: str, index: tuple[slice, ...]) -> np.ndarray:
        """The stored values at ``index`` of variable ``name``."""
        return np.asarray(self.nc[name][index])

    def set_write_cache(self, name: str, size: int) -> None:
        """The HDF5 chunk cache of variable ``name``, in bytes (see :mod:`convert.memory`)."""
        self.nc[name].set_var_chunk_cache(size=size)

    def read(self, name: str, start: int | None = None, stop: int | None = None) -> np.ndarray:
        var = self.nc[name]
        return np.asarray(var[...] if start is None else var[start:stop])

    def sync(self) -> None:
        self.nc.sync()

    def close(self) -> None:
        self.nc.close()

    def storage(self, name: str) -> tuple[Any, dict[str, Any]]:
        """A variable's chunking and filters as the file reports them."""
        var = self.nc[name]
        return var.chunking(), var.filters()


def _encoding(var: Any, layout: Layout) -> dict[str, Any]:
    # netCDF-C quantises each slab as it is written, leaving fill values as they are
    keywords = dict(netcdf4_encoding(layout.codec)) | netcdf4_kwargs(layout.lossy)
    chunks = layout.chunks_for(tuple(map(str, var.dims)), var.shape)
    if chunks == "contiguous":
        if keywords.get("compression"):
            raise UsageError("chunks: contiguous storage cannot be compressed in netCDF4")
        keywords["contiguous"] = True
    elif chunks != "auto":
        keywords["chunksizes"] = chunks
    return keywords
