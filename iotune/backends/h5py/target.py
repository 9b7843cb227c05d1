"""The HDF5 apply target: a netCDF-4 file written through h5netcdf over an ``h5py.File``.

The file is opened by the h5py backend's own :func:`~iotune.backends.h5py.backend.open_file`,
so the file-level knobs (page size and file-space strategy, alignment, metadata block
size, libver bounds, sieve buffer, page buffer, chunk cache) are applied as the sweep
applied them, and each converted dataset gets the fill and allocation times; h5netcdf
then writes dimensions as dimension scales, variables and attributes, so netCDF-C and
xarray read the file.  Values are written raw through h5py (``_FillValue`` at creation,
every other attribute after), region by region.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.h5py.backend import access_properties, dataset_kwargs, open_file
from iotune.backends.hdf5_family import dataset_properties, file_space, resolve_file
from iotune.backends.target import TargetPlan, TargetVariable, TargetWriter
from iotune.core.errors import NotApplicable
from iotune.core.units import chunk_label
from iotune.model import codecs
from iotune.model.codecs import Codec
from iotune.model.spec import Workload

#: the file-level and dataset knobs an HDF5 file carries (or HDF5 applies while writing)
FILE_CARRIED = (
    "alignment",
    "alignment_threshold",
    "meta_block_size",
    "libver",
    "page_size",
    "fill_time",
    "alloc_time",
)


#: the reader-side knobs as h5py.File's keywords (h5netcdf's ``driver_kwds`` take the same)
READ_KEYWORDS = {
    "chunk_cache": "rdcc_nbytes",
    "cache_slots": "rdcc_nslots",
    "cache_preemption": "rdcc_w0",
    "page_buffer": "page_buf_size",
}


class H5Target(TargetWriter):
    """The partial target file at ``path``, created (``w``) or reopened (``a``)."""

    carried = ("chunks", "codec", "level", "shuffle", *FILE_CARRIED)
    reader_side = (
        "chunk_cache",
        "cache_slots",
        "cache_preemption",
        "sieve_buf_size",
        "page_buffer",
        "dask_chunks",
        "dask_threads",
    )
    while_writing = ("alignment", "alignment_threshold", "meta_block_size", "libver")
    suffixes = (".h5", ".hdf5")
    file_kind = "an HDF5"
    engine = "h5netcdf"
    hdf5_chunks = True
    measured = "an HDF5 file has one writer; the region copier as for netCDF4"

    def __init__(self, path: Path, *, mode: str, plan: TargetPlan) -> None:
        import h5netcdf

        from iotune.backends.h5py.backend import H5pyBackend

        H5pyBackend.import_library()  # hdf5plugin's filters
        self.path = path
        self.settings = dict(plan.settings)
        first = plan.variable(plan.converted[0])
        params = self.settings | {"chunks": chunk_label(first.chunks)}
        self.h5 = open_file(path, mode, params, Workload(first.dims, first.shape, str(first.dtype)))
        self.nc = h5netcdf.File(self.h5, "w" if mode == "w" else "r+")

    @classmethod
    def check(
        cls, settings: Mapping[str, Any], chunks: tuple[int, ...] | str, codec: Codec
    ) -> None:
        if chunks == "contiguous" and codec.name != "none":
            raise NotApplicable("chunks: contiguous storage cannot be compressed in HDF5")
        codecs.h5py_encoding(codec)
        resolve_file(settings, chunk_label(chunks), tuple(settings))

    @classmethod
    def create(cls, path: Path, plan: TargetPlan, ds: Any) -> H5Target:
        """Dimensions, variables and attributes; no values (regions and blocks follow)."""
        target = cls(path, mode="w", plan=plan)
        nc = target.nc
        for dim, length in plan.sizes.items():
            nc.dimensions[dim] = None if dim in plan.unlimited else length
        for var in plan.variables:
            attrs = dict(var.attrs)
            fill = attrs.pop("_FillValue", None)
            keywords = _storage(var, plan) if var.converted else _own(var)
            made = nc.create_variable(var.name, var.dims, var.dtype, fillvalue=fill, **keywords)
            for key, value in attrs.items():
                made.attrs[key] = value
        for key, value in plan.attrs.items():
            nc.attrs[key] = value
        for dim in plan.unlimited:  # the records are written by region, in place
            nc.resize_dimension(dim, plan.sizes[dim])
        target.sync()
        return target

    @classmethod
    def reopen(cls, path: Path, plan: TargetPlan, ds: Any) -> H5Target:
        return cls(path, mode="a", plan=plan)

    def write(self, name: str, start: int, stop: int, values: np.ndarray) -> None:
        dset = self.h5[name]
        if dset.ndim == 0:
            dset[()] = values
        else:
            dset[start:stop] = values

    def write_block(self, name: str, index: tuple[slice, ...], values: np.ndarray) -> None:
        self.h5[name][index] = values

    def read_block(self, name: str, index: tuple[slice, ...]) -> np.ndarray:
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

    @contextlib.contextmanager
    def chunk_file(self) -> Iterator[Any]:
        """The writer's own ``h5py.File`` (its file-level knobs applied), flushed after."""
        self.nc.flush()
        try:
            yield self.h5
        finally:
            self.h5.flush()

    def applied(self) -> dict[str, Any] | None:
        """The file-level properties HDF5 applied: file space, alignment, libver, caches.

        ``libver`` is the lower bound, named as asked when HDF5 holds the same bound
        under two names (``v114`` and ``latest`` in HDF5 1.14).
        """
        from h5py import h5f

        found = file_space(self.h5) | access_properties(self.h5.id.get_access_plist())
        low = self.h5.id.get_access_plist().get_libver_bounds()[0]
        asked = self.settings.get("libver")
        if asked and getattr(h5f, f"LIBVER_{str(asked).upper()}", None) == low:
            found["libver"] = asked
        else:
            found["libver"] = str(found["libver"]).split("..")[0]
        return found

    def storage(self, name: str) -> tuple[Any, list[str]]:
        """A variable's chunks and its filters' names, as the file reports them."""
        dset = self.h5[name]
        plist = dset.id.get_create_plist()
        names = [
            plist.get_filter(i)[3].decode(errors="replace") for i in range(plist.get_nfilters())
        ]
        chunks = "contiguous" if dset.chunks is None else tuple(dset.chunks)
        return chunks, names

    @classmethod
    def read_back(cls, path: Path, variable: str) -> dict[str, Any]:
        """Chunks, codec, page size, fill and allocation times of ``variable``'s dataset."""
        import h5py

        with h5py.File(path, "r") as fh:
            dset = fh[variable]
            space = file_space(fh)
            plist = dset.id.get_create_plist()
            filters = [plist.get_filter(i) for i in range(plist.get_nfilters())]
            found: dict[str, Any] = dataset_properties(dset)
            found["chunks"] = "contiguous" if dset.chunks is None else chunk_label(dset.chunks)
        paged = space["file_space_strategy"] == "page"
        found["page_size"] = space["file_space_page_size"] if paged else None
        return found | _codec(filters)

    @classmethod
    def reader_lines(cls, settings: Mapping[str, Any]) -> list[str]:
        """h5py's open with the chunk cache and page buffer, then xarray's (h5netcdf)."""
        driver = _driver_keywords(settings)
        lines = []
        if driver:
            keywords = ", ".join(f"{k}={v!r}" for k, v in driver.items())
            lines.append(f'f = h5py.File(path, "r", {keywords})')
        if settings.get("sieve_buf_size") is not None:
            size = int(settings["sieve_buf_size"])
            lines.append(
                "# sieve buffer: fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS); "
                f"fapl.set_sieve_buf_size({size})"
            )
        return [*lines, *super().reader_lines(settings)]

    @classmethod
    def xarray_keywords(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        driver = _driver_keywords(settings)
        found = {"driver_kwds": driver} if driver else {}
        return found | super().xarray_keywords(settings)


def _driver_keywords(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The reader-side knobs of ``settings`` as h5py.File's (and h5netcdf's) keywords."""
    return {
        kw: settings[knob] for knob, kw in READ_KEYWORDS.items() if settings.get(knob) is not None
    }


def _codec(filters: list[Any]) -> dict[str, Any]:
    """``codec``, ``level`` and ``shuffle`` from a dataset's HDF5 filter pipeline."""
    ids = [f[0] for f in filters]
    shuffle = "byte" if codecs.HDF5_SHUFFLE_FILTER in ids else "none"
    for name, family in codecs.FAMILIES.items():
        if family.hdf5_filter in ids and name != "blosc":
            values = filters[ids.index(family.hdf5_filter)][2]
            return {"codec": name, "level": int(values[0]), "shuffle": shuffle}
    return {"codec": "none" if not ids else "+".join(map(str, ids)), "shuffle": shuffle}


def _storage(var: TargetVariable, plan: TargetPlan) -> dict[str, Any]:
    """``create_dataset`` keywords of a converted variable: chunks, filters, fill/alloc time."""
    keywords = codecs.h5py_encoding(plan.codec) | dataset_kwargs(plan.settings)
    if var.chunks == "auto":
        keywords["chunks"] = True
    elif var.chunks != "contiguous":  # (check() refuses contiguous with compression)
        keywords["chunks"] = var.chunks
    return keywords


def _own(var: TargetVariable) -> dict[str, Any]:
    """A variable not converted keeps its own chunks and compression."""
    if not var.dims:
        return {}
    own = var.encoding
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
