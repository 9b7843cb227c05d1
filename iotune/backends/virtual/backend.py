"""The workload's source file(s) read in place through virtual Zarr references.

A trial's "write" builds the references with VirtualiZarr (timed as the write, their
size is the stored size): no byte of the data is copied.  Every read goes through
zarr-python 3 (or xarray over it) to the chunks of the source files, whose pages are
evicted before a cold read as a written file's are.  Only a ``field: file`` workload
of netCDF4/HDF5 files, read at its own shape, has a source to reference.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.base import Reader, Selection, SlabBackend, Writer, check_properties
from iotune.backends.exports_base import Target, make_all
from iotune.backends.source_file import check_read_as_held
from iotune.backends.virtual import references
from iotune.backends.virtual.exports import virtualizarr_code
from iotune.backends.virtual.knobs import VirtualKnobs
from iotune.backends.xarray_open import VARIABLE, Chunks, open_with, resolve_xarray
from iotune.core.errors import VerificationError
from iotune.model.spec import StorageSpec, Workload


class _ReferenceWriter(Writer):
    """Builds the references when closed; the slabs it is handed are the source's own."""

    def __init__(self, path: Path, sources: list[Path], params: Mapping[str, Any]) -> None:
        self._path, self._sources = path, sources
        self._knobs = VirtualKnobs.of(params)

    def write(self, start: int, data: np.ndarray) -> None:
        """Nothing to store: the references point at the source, which holds ``data``."""

    def close(self) -> None:
        vds = references.virtual_dataset(self._sources)
        try:
            references.build(
                vds,
                self._path,
                form=self._knobs.reference,
                inline_threshold=self._knobs.inline_threshold or 0,
                prefix=_common_prefix(self._sources),
            )
        finally:
            vds.close()


def _common_prefix(sources: list[Path]) -> str:
    """``file://`` URL of the deepest directory holding every source, ending in ``/``."""
    folder = os.path.commonpath([str(p.resolve().parent) for p in sources])
    return Path(folder).as_uri().rstrip("/") + "/"


class _ReferenceReader(Reader):
    def __init__(self, path: Path, form: str, variable: str, dtype: str) -> None:
        import zarr

        with references.quiet():
            store = references.open_store(path, form)
            fmt = references.zarr_format(form)
            self._array = zarr.open_array(store, path=variable, mode="r", zarr_format=fmt)
        self._dtype = np.dtype(dtype)

    def read(self, selection: Selection) -> np.ndarray:
        with references.quiet():
            # the workload's dtype, as the runner's slabs hold the source's values
            return np.asarray(self._array[selection]).astype(self._dtype, copy=False)

    def close(self) -> None:
        self._array.store.close()


class VirtualBackend(SlabBackend):
    """Virtual Zarr references (kerchunk JSON or Parquet, an Icechunk repository) to the
    workload's netCDF4/HDF5 source, one file or a glob's files along the record dimension.

    ``reference`` is the form, ``inline_threshold`` the size below which kerchunk
    references carry a chunk's bytes (Icechunk's virtual chunks are never inlined),
    ``dask_chunks`` the read through xarray.
    """

    name = "virtual"
    library = "virtualizarr"
    extra = "virtual"
    suffix = ".refs"
    one_off = "references"  # the build's seconds and the references' bytes, never the data
    knobs = VirtualKnobs
    parameters = VirtualKnobs.names()
    description = "netCDF4/HDF5 source read in place through VirtualiZarr references"

    def __init__(self) -> None:
        #: the source files of the last writer, evicted with the references before a read
        self._sources: list[Path] = []
        self._variable = ""

    @classmethod
    def import_library(cls) -> None:
        import icechunk  # noqa: F401
        import kerchunk.df  # noqa: F401
        import virtualizarr.parsers  # noqa: F401
        import zarr.storage  # noqa: F401

    @classmethod
    def check_workload(cls, workload: Workload) -> None:
        """The source is a file (or files) VirtualiZarr references: parsed now, nothing kept.

        Raises
        ------
        UsageError
            The workload is generated, or a source file cannot be referenced (not
            HDF5, e.g. netCDF3; a filter with no Zarr codec).
        """
        from iotune.core.errors import UsageError
        from iotune.measuring.data import source_files

        if workload.field != "file" or workload.path is None:
            raise UsageError(
                f"workload.field: {workload.field!r} with backend virtual; allowed: file "
                "(virtual references the source's netCDF4/HDF5 files)"
            )
        references.virtual_dataset(source_files(workload.path)).close()

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        check_read_as_held("virtual", "references a source file", workload)
        assert workload.path is not None  # checked there
        knobs = VirtualKnobs.of(params)
        effective: dict[str, Any] = {"reference": knobs.reference}
        notes: list[str] = []
        if knobs.reference in references.KERCHUNK:
            effective["inline_threshold"] = knobs.inline_threshold
        else:
            effective["inline_threshold"] = None
            if params.get("inline_threshold") is not None:
                notes.append("inline_threshold applies only to kerchunk references")
        dask, more = resolve_xarray(params)
        return effective | dask, notes + more

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        from iotune.measuring.data import source_files

        assert workload.path is not None and workload.variable is not None  # resolve checked
        self._sources = [p.resolve() for p in source_files(workload.path)]
        self._variable = workload.variable
        return _ReferenceWriter(path, self._sources, params)

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        assert workload.variable is not None
        return _ReferenceReader(path, params["reference"], workload.variable, workload.dtype)

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        """The references exist in the asked form and point at the source's files only."""
        form = params["reference"]
        files, referenced, inlined = references.referenced_files(path, form, self._variable)
        sources = {str(p) for p in self._sources}
        if not files <= sources:
            raise VerificationError(
                f"the references point at {sorted(files - sources)}, not the source's files"
            )
        threshold = params.get("inline_threshold") or 0
        if threshold and referenced.smallest < threshold:
            raise VerificationError(
                f"a chunk of {referenced.smallest} bytes is referenced, not inlined "
                f"(inline_threshold {threshold})"
            )
        stored = {
            "reference": form,
            "source_files": len(self._sources),
            "files_referenced": len(files),
            "chunks_referenced": referenced.count,
            "chunks_inlined": inlined,
            "references_bytes": self.stored_bytes(path),
        }
        check_properties(stored, {"reference": form})
        return stored

    def stored_bytes(self, path: Path) -> int:
        """Bytes of the references alone: the source is the user's, not a trial's."""
        return sum(p.stat().st_size for p in super().paths(path))

    def paths(self, path: Path) -> list[Path]:
        """The references and the source files: a cold read finds neither in the page cache.

        A backend that did not build the references (a concurrent reader's process)
        finds the files in them.
        """
        refs = super().paths(path)
        if self._sources or not refs:
            return [*refs, *self._sources]
        kerchunk = path.is_file() or (path / ".zmetadata").is_file()  # JSON, or Parquet's
        form = "kerchunk-json" if kerchunk else "icechunk"
        files, _, _ = references.referenced_files(path, form, self._variable)
        return [*refs, *sorted(Path(f) for f in files)]

    def open_dataset(
        self,
        path: Path,
        params: Mapping[str, Any],
        *,
        chunks: Chunks,
        workload: Workload | None = None,
    ) -> Any:
        """The source's variable through the references as ``data``, raw, the workload's dims."""
        import xarray as xr

        assert workload is not None and workload.variable is not None  # the runner passes it
        form = params["reference"]
        with references.quiet():
            store = references.open_store(path, form)
            options = {"zarr_format": references.zarr_format(form), "consolidated": False}
            opened = open_with(
                xr.open_zarr, store, chunks=chunks, options=options | {"decode_cf": False}
            )
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
        """VirtualiZarr's lines that build the point's references and open them."""
        return make_all({"virtualizarr": lambda: {"text": virtualizarr_code(settings, target)}})
