"""The netCDF4 apply target, written through netCDF4-python: raw values, slab by slab.

Auto masking and scaling are off, so the source's stored values are written as they
are; ``_FillValue`` is given at creation (netCDF requires it), every other attribute
after.  Unlimited dimensions stay unlimited.  The file carries the format (``format``),
the fill mode (``fill``: netCDF-C's ``nc_set_fill``, kept per variable), quantisation
and, while it is written, netCDF-C's alignment; the chunk cache is a reader's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from iotune.backends.netcdf4.knobs import NetCDF4Knobs
from iotune.backends.target import TargetPlan, TargetVariable, TargetWriter
from iotune.backends.xarray_exports import netcdf4_cache_lines
from iotune.core.errors import NotApplicable
from iotune.core.units import chunk_label
from iotune.model import quantize
from iotune.model.codecs import Codec, netcdf4_encoding
from iotune.model.quantize import netcdf4_kwargs

#: a netCDF-3 file: no chunks, no codecs, no HDF5 properties
CLASSIC3 = "NETCDF3_64BIT_DATA"


class NetcdfTarget(TargetWriter):
    """The partial target file at ``path``, created or reopened for appending."""

    carried = (
        "chunks",
        "codec",
        "level",
        "shuffle",
        "quantize",
        "fill",
        "format",
        "alignment",
        "alignment_threshold",
    )
    reader_side = ("chunk_cache", "cache_slots", "cache_preemption", "dask_chunks", "dask_threads")
    while_writing = ("alignment", "alignment_threshold")
    suffixes = (".nc", ".nc4")
    default_target = True
    file_kind = "a netCDF4"
    engine = "netcdf4"
    hdf5_chunks = True
    measured = "measured faster than nccopy -c and dask rechunk + to_netcdf, in less memory"

    def __init__(self, path: Path, *, mode: Literal["w", "a"], settings: Mapping[str, Any]) -> None:
        import netCDF4

        self.path = path
        self.knobs = NetCDF4Knobs.of(settings)
        self._applied: dict[str, Any] = {}
        with _alignment(self.knobs, self._applied):
            fmt: Any = self.knobs.format
            self.nc = netCDF4.Dataset(path, mode, format=fmt)
        self.nc.set_auto_maskandscale(False)

    @classmethod
    def check(
        cls, settings: Mapping[str, Any], chunks: tuple[int, ...] | str, codec: Codec
    ) -> None:
        netcdf4_encoding(codec)
        if chunks == "contiguous" and codec.name != "none":
            raise NotApplicable("chunks: contiguous storage cannot be compressed in netCDF4")
        knobs = NetCDF4Knobs.of(settings)
        if knobs.alignment_threshold != 1 and not knobs.alignment:
            raise NotApplicable("alignment_threshold needs an alignment interval")
        if knobs.format != CLASSIC3:
            return
        if chunks != "contiguous":
            raise NotApplicable(f"format {CLASSIC3} stores no chunks: use chunks=contiguous")
        if codec.name != "none":
            raise NotApplicable(f"format {CLASSIC3} has no compression")
        if knobs.alignment:
            raise NotApplicable(f"alignment: a {CLASSIC3} file is not HDF5")
        if knobs.quantize != "off":
            raise NotApplicable("quantize: netCDF-C quantises only netCDF-4 files")

    @classmethod
    def create(cls, path: Path, plan: TargetPlan, ds: Any) -> NetcdfTarget:
        """Dimensions, variables and attributes; no values (regions and blocks follow)."""
        target = cls(path, mode="w", settings=plan.settings)
        nc = target.nc
        if NetCDF4Knobs.of(plan.settings).fill == "off":
            nc.set_fill_off()  # netCDF-4 keeps it for each variable defined from now on
        for dim, length in plan.sizes.items():
            nc.createDimension(dim, None if dim in plan.unlimited else length)
        for var in plan.variables:
            attrs = dict(var.attrs)
            fill = attrs.pop("_FillValue", None)
            made = nc.createVariable(
                var.name,
                var.dtype.newbyteorder("="),
                var.dims,
                fill_value=fill,
                **_keywords(var, plan),
            )
            made.set_auto_maskandscale(False)
            made.setncatts(attrs)
        nc.setncatts(dict(plan.attrs))
        nc.sync()
        return target

    @classmethod
    def reopen(cls, path: Path, plan: TargetPlan, ds: Any) -> NetcdfTarget:
        return cls(path, mode="a", settings=plan.settings)

    def write(self, name: str, start: int, stop: int, values: np.ndarray) -> None:
        var = self.nc[name]
        if var.ndim == 0:
            var[...] = values
        else:
            var[start:stop] = values

    def write_block(self, name: str, index: tuple[slice, ...], values: np.ndarray) -> None:
        self.nc[name][index] = values

    def read_block(self, name: str, index: tuple[slice, ...]) -> np.ndarray:
        return np.asarray(self.nc[name][index])

    def set_write_cache(self, name: str, size: int) -> None:
        """The HDF5 chunk cache of variable ``name``, in bytes (not kept in the file)."""
        if self.nc.data_model != CLASSIC3:
            self.nc[name].set_var_chunk_cache(size=size)

    def read(self, name: str, start: int | None = None, stop: int | None = None) -> np.ndarray:
        var = self.nc[name]
        return np.asarray(var[...] if start is None else var[start:stop])

    def sync(self) -> None:
        self.nc.sync()

    def close(self) -> None:
        self.nc.close()

    def storage(self, name: str) -> tuple[Any, Any]:
        """A variable's chunking and filters as the file reports them."""
        var = self.nc[name]
        # a netCDF-3 variable has neither (both None)
        return var.chunking() or "contiguous", var.filters() or {}

    @contextlib.contextmanager
    def chunk_file(self) -> Iterator[Any]:
        """The file through h5py, netCDF-C's handle closed meanwhile; alignment as netCDF-C's.

        netCDF4-python and h5py bundle HDF5 libraries of their own: only one may hold
        the file.  Chunks written through h5py keep netCDF's metadata untouched.
        """
        import h5py
        import hdf5plugin  # noqa: F401 - the filters of variables h5py writes itself
        import netCDF4

        if self.nc.data_model == CLASSIC3:
            raise NotImplementedError(f"a {CLASSIC3} file is not HDF5")
        self.nc.close()
        aligned = {}
        if self.knobs.alignment:
            aligned = {
                "alignment_threshold": self.knobs.alignment_threshold,
                "alignment_interval": self.knobs.alignment,
            }
        try:
            with h5py.File(self.path, "r+", **aligned) as h5:
                yield h5
        finally:
            with _alignment(self.knobs, {}):
                self.nc = netCDF4.Dataset(self.path, "a")
            self.nc.set_auto_maskandscale(False)

    def applied(self) -> dict[str, Any] | None:
        """netCDF-C's alignment while the file was written (the file does not keep it)."""
        return dict(self._applied) or None

    @classmethod
    def read_back(cls, path: Path, variable: str) -> dict[str, Any]:
        """Format, fill mode, quantisation, chunks and codec of ``variable``."""
        import netCDF4

        with netCDF4.Dataset(path, "r") as nc:
            var = nc[variable]
            found: dict[str, Any] = {"format": nc.data_model}
            found["fill"] = "off" if var.get_fill_value() is None else "on"
            chunking = var.chunking()
            found["chunks"] = (
                "contiguous" if chunking in ("contiguous", None) else chunk_label(chunking)
            )
            found |= _codec(var.filters() or {})
            found["quantize"] = _quantization(var) if nc.data_model != CLASSIC3 else "off"
        return found

    @classmethod
    def reader_lines(cls, settings: Mapping[str, Any]) -> list[str]:
        return [*netcdf4_cache_lines(settings), *super().reader_lines(settings)]


@contextlib.contextmanager
def _alignment(knobs: NetCDF4Knobs, applied: dict[str, Any]) -> Iterator[None]:
    """netCDF-C's alignment, global, set only while the file is opened."""
    if not knobs.alignment:
        yield
        return
    import netCDF4

    before = netCDF4.get_alignment()
    netCDF4.set_alignment(knobs.alignment_threshold, knobs.alignment)
    threshold, interval = netCDF4.get_alignment()
    applied |= {"alignment": interval, "alignment_threshold": threshold}
    try:
        yield
    finally:
        # once set, netCDF-C hands (0, 0) to H5Pset_alignment, which fails every later
        # create ("HDF error"); (1, 1) is HDF5's own default, aligning nothing
        netCDF4.set_alignment(*before if before[1] else (1, 1))


def _keywords(var: TargetVariable, plan: TargetPlan) -> dict[str, Any]:
    """``createVariable`` keywords: the plan's for converted variables, else their own."""
    if NetCDF4Knobs.of(plan.settings).format == CLASSIC3:
        return {}  # contiguous and uncompressed: check() refused anything else
    if not var.converted:
        return dict(var.encoding) if var.dims else {}
    # netCDF-C quantises each slab as it is written, leaving fill values as they are
    keywords = dict(netcdf4_encoding(plan.codec)) | netcdf4_kwargs(plan.quantize)
    if var.chunks == "contiguous":
        keywords["contiguous"] = True
    elif var.chunks != "auto":
        keywords["chunksizes"] = var.chunks
    return keywords


def _codec(filters: Mapping[str, Any]) -> dict[str, Any]:
    """``codec``, ``level`` and ``shuffle`` from netCDF4-python's ``filters()``."""
    for name in ("zstd", "bzip2", "zlib", "szip", "blosc"):
        if filters.get(name):
            level = filters.get("complevel")
            shuffle = "byte" if filters.get("shuffle") else "none"
            return {"codec": name, "level": level, "shuffle": shuffle}
    return {"codec": "none", "shuffle": "byte" if filters.get("shuffle") else "none"}


def _quantization(var: Any) -> str:
    """The variable's quantisation as the vocabulary writes it (``off``, ``digits:3``)."""
    found = var.quantization()
    if not found:
        return "off"
    modes = {v: k for k, v in quantize.NETCDF_MODES.items()}
    return f"{modes[found[1]]}:{found[0]}"
