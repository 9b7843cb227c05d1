"""The workload's source file(s) read as they are: opened with xarray, nothing written.

This is what a user does before any conversion: ``xr.open_dataset`` of the file (or
``xr.open_mfdataset`` of a glob's files) through an engine (``netcdf4``, ``h5netcdf``),
with or without dask chunks.  A trial's "write" makes nothing (its seconds are the
writer's no-op, its one-off cost nothing); its stored size is the source's, and every
read, the user's functions and ``batches`` included, opens the source files, whose pages
are evicted before a cold read as a written file's are.  Only a ``field: file``
workload of netCDF/HDF5 files, read at its own shape, has a source to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.base import Reader, Selection, SlabBackend, Writer, check_properties
from iotune.backends.exports_base import Target, make_all
from iotune.backends.inplace.exports import xarray_code
from iotune.backends.inplace.knobs import InplaceKnobs
from iotune.backends.source_file import check_read_as_held
from iotune.backends.xarray_open import VARIABLE, Chunks, open_with, resolve_xarray, xarray_chunks
from iotune.core.errors import NotApplicable, VerificationError
from iotune.model.spec import StorageSpec, Workload


def open_source(sources: list[Path], engine: str, chunks: Chunks) -> Any:
    """The source as the user opens it, its values raw (``decode_cf=False``).

    Raw, as the runner's slabs hold them: a read's checksum is the source's, and a
    user's function sees them decoded as ``xr.open_dataset`` decodes the file
    (:mod:`iotune.measuring.sourceview`), inside the timed span.  Several files are
    combined by their coordinates, as ``xr.open_mfdataset`` combines them (always dask).
    """
    import xarray as xr

    if len(sources) == 1:
        options = {"engine": engine, "decode_cf": False}
        return open_with(xr.open_dataset, sources[0], chunks=chunks, options=options)
    return xr.open_mfdataset(
        sources, engine=engine, decode_cf=False, combine="by_coords", chunks=xarray_chunks(chunks)
    )


class _NothingWriter(Writer):
    """The source already holds every slab: a write stores nothing and makes no file."""

    def write(self, start: int, data: np.ndarray) -> None:
        """Nothing to store: the source holds ``data``."""

    def close(self) -> None:
        """Nothing was opened."""


class _SourceReader(Reader):
    """Selections of the source's variable through xarray's engine, without dask."""

    def __init__(self, sources: list[Path], engine: str, variable: str, dtype: str) -> None:
        self._ds = open_source(sources, engine, None)
        self._variable = self._ds[variable].variable
        self._dtype = np.dtype(dtype)

    def read(self, selection: Selection) -> np.ndarray:
        # the workload's dtype, as the runner's slabs hold the source's values
        return np.asarray(self._variable[selection].values).astype(self._dtype, copy=False)

    def close(self) -> None:
        self._ds.close()


class InplaceBackend(SlabBackend):
    """The workload's netCDF/HDF5 source opened as it is with xarray: nothing written.

    ``engine`` is xarray's engine for the file(s), ``dask_chunks`` the dask read (a
    glob's files are always read through dask, as ``open_mfdataset`` reads them).
    """

    name = "inplace"
    library = "xarray"
    suffix = ".none"
    one_off = "in-place"  # nothing made: the source is read as it is
    knobs = InplaceKnobs
    parameters = InplaceKnobs.names()
    description = "netCDF/HDF5 source read as it is with xarray (nothing written)"

    def __init__(self) -> None:
        #: the source files, set by the writer: what a cold read evicts and reads
        self._sources: list[Path] = []
        self._variable = ""

    @classmethod
    def import_library(cls) -> None:
        import h5netcdf  # noqa: F401
        import netCDF4  # noqa: F401
        import xarray  # noqa: F401

    @classmethod
    def check_workload(cls, workload: Workload) -> None:
        """The source is a netCDF/HDF5 file, or a glob of them, that exists.

        Raises
        ------
        UsageError
            The workload is generated, or its source is missing or a store (a directory).
        """
        from iotune.core.errors import UsageError
        from iotune.measuring.data import source_files

        if workload.field != "file" or workload.path is None:
            raise UsageError(
                f"workload.field: {workload.field!r} with backend inplace; allowed: file "
                "(inplace reads the source's netCDF/HDF5 files as they are)"
            )
        try:
            files = source_files(workload.path)
        except FileNotFoundError as err:
            raise UsageError(f"workload.path: {workload.path!r} matches no file") from err
        for file in files:
            if not file.is_file():
                what = "a directory (a store)" if file.is_dir() else "missing"
                raise UsageError(
                    f"workload.path: {str(file)!r} is {what}; allowed with backend inplace: "
                    "netCDF/HDF5 files"
                )

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        check_read_as_held("inplace", "reads a source file", workload)
        assert workload.path is not None  # checked there
        engine = InplaceKnobs.of(params).engine
        if engine == "h5netcdf":
            _check_hdf5(workload.path)
        dask, notes = resolve_xarray(params)
        return {"engine": engine} | dask, notes

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        from iotune.measuring.data import source_files

        assert workload.path is not None and workload.variable is not None  # resolve checked
        self._sources = [p.resolve() for p in source_files(workload.path)]
        self._variable = workload.variable
        return _NothingWriter()

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        assert workload.variable is not None
        return _SourceReader(self._sources, params["engine"], workload.variable, workload.dtype)

    def syncs(self, params: Mapping[str, Any]) -> bool:
        """Nothing was written, so nothing is synced (the source is the user's)."""
        return True

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        """Nothing was made at ``path``; the engine opens the source: its layout, read back."""
        if path.exists():
            raise VerificationError(f"an in-place trial made {path}; it must write nothing")
        engine = params["engine"]
        with open_source(self._sources, engine, None) as ds:
            encoding = ds[self._variable].encoding
        chunks = encoding.get("chunksizes")
        stored = {
            "engine": engine,
            "source_files": len(self._sources),
            "source_bytes": self.stored_bytes(path),
            "source_chunks": list(chunks) if chunks else "contiguous",
            "source_compression": encoding.get("compression")
            or ("zlib" if encoding.get("zlib") else "none"),
            "written_bytes": 0,
        }
        check_properties(stored, {"engine": engine})
        return stored

    def paths(self, path: Path) -> list[Path]:
        """The source files: what a read opens, so what a cold read evicts."""
        return list(self._sources)

    def open_dataset(
        self,
        path: Path,
        params: Mapping[str, Any],
        *,
        chunks: Chunks,
        workload: Workload | None = None,
    ) -> Any:
        """The source's variable as ``data``, raw, with the workload's dimension names."""
        import xarray as xr

        assert workload is not None and workload.variable is not None  # the runner passes it
        opened = open_source(self._sources, params["engine"], chunks)
        variable = opened[workload.variable].variable
        dims = dict(zip(variable.dims, workload.dims, strict=True))
        encoding = dict(variable.encoding)
        if "preferred_chunks" in encoding:  # dask's "storage" chunks, by the workload's names
            encoding["preferred_chunks"] = {
                dims[d]: n for d, n in encoding["preferred_chunks"].items()
            }
        ds = xr.Dataset({VARIABLE: xr.Variable(workload.dims, variable.data, encoding=encoding)})
        ds.set_close(opened.close)
        return ds

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The xarray call that opens the source as the point read it."""
        return make_all({"xarray": lambda: {"text": xarray_code(settings, target)}})


def _check_hdf5(path: str) -> None:
    """h5netcdf opens HDF5 files only (netCDF4 is HDF5; netCDF3 is not)."""
    import h5py

    from iotune.measuring.data import source_files

    for file in source_files(path):
        if not h5py.is_hdf5(file):
            raise NotApplicable(
                f"engine h5netcdf reads HDF5 files only; {file} is not one (netCDF3?): "
                "use engine netcdf4"
            )
