"""An HDF5 target: a netCDF-4 file written through h5netcdf over an ``h5py.File``.

The file is opened by the h5py backend's own :func:`~iotune.backends.h5py.backend.open_file`,
so the file-level knobs a recommendation holds (page size and file-space strategy,
alignment, metadata block size, sieve buffer, libver bounds, page buffer, chunk
cache) are applied as the sweep applied them; h5netcdf then writes dimensions as
dimension scales, variables and attributes, so netCDF-C and xarray read the file.
Values are written raw through h5py (``_FillValue`` at creation, every other
attribute after), region by region.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.h5py.backend import access_properties, dataset_kwargs, open_file
from iotune.backends.hdf5_family import file_space
from iotune.convert.layout import Layout
from iotune.convert.source import Source, own_encoding
from iotune.core.errors import NotApplicable
from iotune.core.units import chunk_label
from iotune.model import codecs
from iotune.model.spec import Workload

#: the backend names that write this target
HDF5_FORMATS = ("h5py", "h5netcdf")


def file_params(layout: Layout, source: Source, converted: Sequence[str]) -> dict[str, Any]:
    """The knobs :func:`open_file` takes: the layout's HDF5 knobs and the first chunks."""
    var = source.ds[converted[0]]
    chunks = layout.chunks_for(tuple(map(str, var.dims)), var.shape)
    return dict(layout.hdf5) | {"chunks": chunk_label(chunks)}


def workload_of(source: Source, name: str) -> Workload:
    """The first converted variable as the h5py backend's :class:`Workload` (cache slots)."""
    var = source.ds[name]
    return Workload(tuple(map(str, var.dims)), tuple(var.shape), str(var.dtype))


class H5Target:
    """The partial target file at ``path``, created (``w``) or reopened (``a``)."""

    def __init__(self, path: Path, *, mode: str, params: Mapping[str, Any], workload: Workload):
        import h5netcdf

        from iotune.backends.h5py.backend import H5pyBackend

        H5pyBackend.import_library()  # hdf5plugin's filters
        self.path = path
        self.h5 = open_file(path, mode, params, workload)
        self.nc = h5netcdf.File(self.h5, "w" if mode == "w" else "r+")

    @classmethod
    def create(
        cls,
        path: Path,
        source: Source,
        layout: Layout,
        converted: Sequence[str],
    ) -> H5Target:
        """Dimensions, variables and attributes; no values (regions and blocks follow)."""
        params = file_params(layout, source, converted)
        target = cls(path, mode="w", params=params, workload=workload_of(source, converted[0]))
        ds, nc = source.ds, target.nc
        for dim, length in ds.sizes.items():
            nc.dimensions[str(dim)] = None if dim in source.unlimited else length
        for name, var in ds.variables.items():
            attrs = dict(var.attrs)
            fill = attrs.pop("_FillValue", None)
            keywords = _storage(var, layout, params) if name in converted else _own(var)
            made = nc.create_variable(
                str(name), tuple(map(str, var.dims)), var.dtype, fillvalue=fill, **keywords
            )
            for key, value in attrs.items():
                made.attrs[key] = value
        for key, value in ds.attrs.items():
            nc.attrs[key] = value
        for dim in source.unlimited:  # the records are written by region, in place
            nc.resize_dimension(dim, ds.sizes[dim])
        target.sync()
        return target

    def write(self, name: str, start: int, stop: int, values: np.ndarray) -> None:
        dset = self.h5[name]
        if dset.ndim == 0:
            dset[()] = values
        else:
            dset[start:stop] = values

    def write_block(self, name: str, index: tuple[slice, ...], values: np.ndarray) -> None:
        """Write ``values`` at ``index`` (one slice per dimension) of variable ``name``."""
        self.h5[name][index] = values

    def read_block(self, name: str, index: tuple[slice, ...]) -> np.ndarray:
        """The stored values at ``index`` of variable ``name``."""
        return np.asarray(self.h5[name][index])

    def read(self, name: str, start: int | None = None, stop: int | None = None) -> np.ndarray:
        dset = self.h5[name]
        return np.asarray(dset[()] if start is None else dset[start:stop])

    def sync(self) -> None:
        self.nc.flush()
        self.h5.flush()

    def close(self) -> None:
        self.nc.close()  # leaves the h5py file it was given open
        self.h5.close()

    def properties(self) -> dict[str, Any]:
        """The file-level properties HDF5 applied: file space, alignment, libver, caches."""
        return file_space(self.h5) | access_properties(self.h5.id.get_access_plist())

    def storage(self, name: str) -> tuple[Any, list[str]]:
        """A variable's chunks and its filters' names, as the file reports them."""
        dset = self.h5[name]
        plist = dset.id.get_create_plist()
        names = [
            plist.get_filter(i)[3].decode(errors="replace") for i in range(plist.get_nfilters())
        ]
        chunks = "contiguous" if dset.chunks is None else tuple(dset.chunks)
        return chunks, names


def _storage(var: Any, layout: Layout, params: Mapping[str, Any]) -> dict[str, Any]:
    """``create_dataset`` keywords of a converted variable: chunks, filters, fill/alloc time."""
    keywords = codecs.h5py_encoding(layout.codec) | dataset_kwargs(params)
    chunks = layout.chunks_for(tuple(map(str, var.dims)), var.shape)
    if chunks == "auto":
        keywords["chunks"] = True
    elif chunks != "contiguous":  # (Layout refuses contiguous with compression)
        keywords["chunks"] = chunks
    return keywords


def _own(var: Any) -> dict[str, Any]:
    """A variable not converted keeps its own chunks and compression."""
    if var.ndim == 0:
        return {}
    own = own_encoding(var)
    codec = codecs.Codec("none")
    if own.get("compression"):
        shuffle = "byte" if own.get("shuffle") else "none"
        codec = codecs.Codec(own["compression"], own.get("complevel"), shuffle)
    try:
        keywords = codecs.h5py_encoding(codec)
    except NotApplicable:  # a codec h5py lacks: stored uncompressed rather than refused
        keywords = {}
    if own.get("chunksizes"):
        keywords["chunks"] = tuple(own["chunksizes"])
    keywords["fletcher32"] = bool(own.get("fletcher32"))
    return keywords
