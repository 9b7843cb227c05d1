"""HDF5 files on an object store: written locally, uploaded, read by h5py through fsspec.

What users do with netCDF-4/HDF5 in the cloud: the file is written to local
disk with h5py, then uploaded (multipart, ``part_size`` parts,
``request_concurrency`` in flight; its own timed step, ``upload_s``), and
read the way h5netcdf and xarray read it, h5py on an fsspec file object whose
``cache_type`` and ``read_block_size`` decide how many requests a read makes.
HDF5's paged aggregation (``page_size``) with a ``page_buffer`` turns many
small metadata reads into a few page-sized GETs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from iotune.backends import exports_base
from iotune.backends.base import Reader, Selection, SlabBackend, Writer
from iotune.backends.exports_base import launch_makers, make_all
from iotune.backends.h5py.backend import DATASET, H5pyBackend, open_file
from iotune.backends.h5py.exports import h5py_code
from iotune.backends.hdf5_family import h5netcdf_options, stored_dtype
from iotune.backends.layout_exports import layout_makers
from iotune.backends.netcdf4.backend import NetCDF4Backend
from iotune.backends.object import exports as object_exports
from iotune.backends.object.base import ObjectStoreBackend
from iotune.backends.object.knobs import (
    Hdf5ObjectKnobs,
    Netcdf4ObjectKnobs,
    UploadedFileKnobs,
)
from iotune.backends.xarray_open import METER_KEY, Chunks, closing_on_error, open_with
from iotune.core.errors import NotApplicable, VerificationError
from iotune.model.spec import StorageSpec, Workload
from iotune.objectstore.clients import close_fsspec, run_cancellable
from iotune.objectstore.meter import Meter
from iotune.objectstore.target import Target


def _local_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of the library writing the local file (no object-store knobs)."""
    return {k: v for k, v in params.items() if k not in UploadedFileKnobs.names()}


class _Writer(Writer):
    """h5py to the local file, then one upload when closed."""

    def __init__(
        self,
        target: Target,
        key: str,
        path: Path,
        workload: Workload,
        params: Mapping[str, Any],
        local: SlabBackend,
    ) -> None:
        from iotune.objectstore.clients import fsspec_filesystem

        self.meter, self._path = Meter(), path
        self._params = params
        self._fs = fsspec_filesystem(target, self.meter)
        self._remote = target.fsspec_path(key)
        self.local = local
        # the local library sees its own knobs; the upload's are this writer's
        self._inner = local.open_writer(path, workload, _local_params(params))
        self.upload_s = float("nan")

    def write(self, start: int, data: np.ndarray) -> None:
        self._inner.write(start, data)

    def close(self) -> None:
        self._inner.close()
        started = time.perf_counter()
        upload = self._fs._put_file(  # s3fs's coroutine, so an interruption can cancel it
            str(self._path),
            self._remote,
            chunksize=int(self._params["part_size"]),
            max_concurrency=int(self._params["request_concurrency"]),
        )
        run_cancellable(self._fs.loop, upload)
        self.upload_s = time.perf_counter() - started
        close_fsspec(self._fs)

    def traffic(self) -> dict[str, Any]:
        return self.meter.summary() | {"upload_s": self.upload_s}


class _Reader(Reader):
    def __init__(self, target: Target, key: str, workload: Workload, params: Mapping[str, Any]):
        from iotune.objectstore.clients import fsspec_filesystem

        self.meter = Meter()
        # a new client: no cache, no open connection
        self._fs = fs = fsspec_filesystem(target, self.meter)
        self._handle = fs.open(
            target.fsspec_path(key),
            "rb",
            cache_type=params["cache_type"],
            block_size=int(params["read_block_size"]),
        )
        self._file = open_file(self._handle, "r", params, workload)
        self._dset = self._file[DATASET]

    def read(self, selection: Selection) -> np.ndarray:
        return np.asarray(self._dset[selection])

    def close(self) -> None:
        self._file.close()
        self._handle.close()
        close_fsspec(self._fs)

    def traffic(self) -> dict[str, Any]:
        return self.meter.summary()


def _object_makers(
    settings: Mapping[str, Any],
    target: exports_base.Target,
    storage: StorageSpec | None,
    hints: Mapping[str, Any] | None,
) -> exports_base.Makers:
    """The upload and the reads of an HDF5 (or netCDF-4) object as measured, and launch knobs."""
    found = object_exports.object_makers(
        settings, target, storage, object_exports.HDF5, defaults=UploadedFileKnobs.defaults()
    )
    return found | launch_makers(settings, hints)


class Hdf5ObjectBackend(ObjectStoreBackend):
    """HDF5 files (h5py) uploaded to the sweep's object store and read through fsspec."""

    name = "hdf5-object"
    default_chunks = "iotune.backends.h5py.defaults:h5py_guess_chunks"
    library = "s3fs"
    suffix = ".h5"
    knobs = Hdf5ObjectKnobs
    parameters: ClassVar[tuple[str, ...]] = Hdf5ObjectKnobs.names()
    description = "HDF5 (h5py) written locally, uploaded, read by h5py through fsspec"
    #: the library that writes the local file
    writer: ClassVar[type[SlabBackend]] = H5pyBackend
    readers = H5pyBackend.readers

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: exports_base.Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The layout exports, h5py's calls for the local file, the upload and reads."""
        makers = layout_makers(settings, target)
        makers["h5py_create_dataset"] = lambda: {"text": h5py_code(settings, target, hints=hints)}
        return make_all(makers | _object_makers(settings, target, storage, hints))

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        effective, notes = cls.writer.resolve(_local_params(params), workload)
        own = {k: params.get(k, d) for k, d in UploadedFileKnobs.defaults().items()}
        return effective | own, notes

    @classmethod
    def fsspec_client(cls, params: Mapping[str, Any]) -> bool:
        return True  # uploaded and read through fsspec whatever the client

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        writer = _Writer(self.target, self.key(path), path, workload, params, self.writer())
        self._local = writer.local
        return writer

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        return _Reader(self.target, self.key(path), workload, params)

    def open_dataset(
        self,
        path: Path,
        params: Mapping[str, Any],
        *,
        chunks: Chunks,
        workload: Workload | None = None,
    ) -> Any:
        """``xr.open_dataset(f, engine="h5netcdf", chunks=...)`` on a new metered fsspec file.

        The file is opened as the h5py reader opens it (``cache_type``,
        ``read_block_size``); the Meter of its requests is ``ds.encoding["iotune_meter"]``.
        """
        import xarray as xr

        from iotune.objectstore.clients import fsspec_filesystem

        H5pyBackend.import_library()
        meter = Meter()
        fs = fsspec_filesystem(self.target, meter)
        closers: list[Any] = [lambda: close_fsspec(fs)]
        with closing_on_error(closers):
            handle = fs.open(
                self.target.fsspec_path(self.key(path)),
                "rb",
                cache_type=params["cache_type"],
                block_size=int(params["read_block_size"]),
            )
            closers.insert(0, handle.close)
            options = h5netcdf_options(params, lambda: stored_dtype(handle, workload))
        ds = open_with(
            xr.open_dataset, handle, chunks=chunks, closers=tuple(closers), options=options
        )
        ds.encoding[METER_KEY] = meter
        return ds

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        local = getattr(self, "_local", None) or self.writer()
        stored = local.verify(path, _local_params(params))
        found, size = self.objects(path), path.stat().st_size
        key = self.key(path)
        if found.get(key) != size:
            raise VerificationError(
                f"object {self.target.url(key)} holds {found.get(key)} bytes, "
                f"the uploaded file {size}"
            )
        return stored | {"object_bytes": size}

    def remove(self, path: Path) -> None:
        super().remove(path)
        path.unlink(missing_ok=True)


class Netcdf4ObjectBackend(Hdf5ObjectBackend):
    """netCDF-4 files (netCDF4-python) uploaded to the object store, read as h5netcdf reads them.

    A netCDF-4 file is an HDF5 file: once uploaded it is read by h5py through
    fsspec, the way ``xarray.open_dataset(..., engine="h5netcdf")`` reads it
    from the cloud.  netCDF-C cannot page a file, so the paging knobs are h5py's only.
    """

    name = "netcdf4-object"
    default_chunks = "iotune.backends.netcdf4.defaults:netcdf_default_chunks"
    library = "s3fs"
    knobs = Netcdf4ObjectKnobs
    parameters = Netcdf4ObjectKnobs.names()
    description = "netCDF-4 written locally (netCDF4), uploaded, read by h5py through fsspec"
    writer = NetCDF4Backend
    readers = NetCDF4Backend.readers

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: exports_base.Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The layout exports (netCDF4-python among them), the upload and reads."""
        makers = layout_makers(settings, target)
        return make_all(makers | _object_makers(settings, target, storage, hints))

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        effective, notes = super().resolve(params, workload)
        if str(effective.get("format", "")).startswith("NETCDF3"):
            raise NotApplicable(f"format {effective['format']} is not HDF5: h5py cannot read it")
        return effective, notes
