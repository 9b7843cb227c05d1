"""A Zarr v3 target written through xarray: metadata first, then each region.

The Dataset is the source's, undecoded, so stored values and attributes (``_FillValue``,
``scale_factor``, ``units``...) go through unchanged.  The variables written by region
are made lazy (dask) for the first ``to_zarr(compute=False)``, which then writes only
the metadata and the other variables; each region is then written into the arrays
with zarr.  Regions are written one after the other, so a chunk two regions share
is safe to update (``safe_chunks=False``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iotune.convert.layout import Layout
from iotune.convert.source import Source, source_chunks
from iotune.model.codecs import zarr_compressors
from iotune.model.quantize import zarr_filters


class ZarrTarget:
    """The partial target store at ``path``."""

    def __init__(self, path: Path, source: Source, by_region: set[str], region_dim: str) -> None:
        self.path = path
        self.source = source
        self.by_region = sorted(by_region)
        self.region_dim = region_dim

    @classmethod
    def create(
        cls,
        path: Path,
        source: Source,
        layout: Layout,
        converted: Sequence[str],
        *,
        by_region: set[str],
        region_dim: str,
    ) -> ZarrTarget:
        """The store's metadata and the variables not written by region.

        Converted variables get the layout's chunks, shards and compressors; the others
        their own chunks.  A shallow copy of the source is changed, never the source.
        """
        ds = source.ds.copy()
        encoding: dict[str, dict[str, Any]] = {}
        for name, var in ds.variables.items():
            if var.ndim == 0:
                continue
            if name in converted:
                chunks = layout.chunks_for(tuple(map(str, var.dims)), var.shape)
                codec = layout.codec
                compressors = zarr_compressors(codec, itemsize=var.dtype.itemsize)
                encoding[str(name)] = {"compressors": compressors}
                if layout.lossy.lossy:  # BitRound rounds each region as zarr writes it
                    encoding[str(name)]["filters"] = zarr_filters(layout.lossy)
                if isinstance(chunks, tuple):
                    encoding[str(name)]["chunks"] = chunks
                shards = layout.shards_for(tuple(map(str, var.dims)), var.shape)
                if shards is not None:
                    encoding[str(name)]["shards"] = shards
            else:
                own = source_chunks(var)
                if isinstance(own, tuple):
                    encoding[str(name)] = {"chunks": own}
            if "_FillValue" not in var.attrs:  # else xarray adds NaN to every float
                encoding.setdefault(str(name), {})["_FillValue"] = None
            var.encoding = {}
        for name in ds.variables:  # lazy: values follow by region and by block
            if name not in ds.indexes and ds[name].ndim:
                ds[name] = ds[name].chunk()
        ds.to_zarr(
            path,
            mode="w",
            compute=False,
            encoding=encoding,
            zarr_format=3,
            consolidated=False,
            safe_chunks=False,
        )
        return cls(path, source, by_region, region_dim)

    def write_region(self, start: int, stop: int) -> None:
        """Rows ``start`` to ``stop`` of every variable written by region, as stored.

        Written through zarr, not ``to_zarr(region=...)``: xarray would encode the raw
        values again with the store's ``scale_factor`` and ``_FillValue``.
        """
        import zarr

        rows = {self.region_dim: slice(start, stop)}
        for name in self.by_region:
            array = zarr.open_array(self.path / name, mode="r+")
            array[start:stop] = self.source.ds[name].isel(rows).values

    def write_block(self, name: str, index: tuple[slice, ...], values: np.ndarray) -> None:
        """Write the stored ``values`` at ``index`` (one slice per dimension) of ``name``."""
        import zarr

        zarr.open_array(self.path / name, mode="r+")[index] = values

    def read_block(self, name: str, index: tuple[slice, ...]) -> np.ndarray:
        """The stored values at ``index`` of variable ``name``."""
        import zarr

        return np.asarray(zarr.open_array(self.path / name, mode="r")[index])

    def write(self, name: str, start: int, stop: int, values: np.ndarray) -> None:
        """Rows ``start`` to ``stop`` of one variable (a scalar: all of it)."""
        import zarr

        array = zarr.open_array(self.path / name, mode="r+")
        if array.ndim == 0:
            array[...] = values
        else:
            array[start:stop] = values

    def read(self, name: str, start: int | None = None, stop: int | None = None) -> np.ndarray:
        import zarr

        array = zarr.open_array(self.path / name, mode="r")
        return np.asarray(array[...] if start is None else array[start:stop])

    def close(self) -> None:
        """Nothing stays open between writes."""

    def storage(self, name: str) -> tuple[Any, list[str]]:
        """A variable's chunk shape and codec names as the store reports them."""
        import zarr

        array = zarr.open_array(self.path / name, mode="r")
        shards = f" in shards of {'x'.join(map(str, array.shards))}" if array.shards else ""
        codecs = "+".join(type(c).__name__ for c in array.compressors) or "none"
        return tuple(array.chunks), [codecs + shards]
