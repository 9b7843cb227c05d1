"""HDF5 files through h5py, with compression filters from hdf5plugin."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.base import (
    LaunchedBackend,
    Reader,
    Selection,
    SlabBackend,
    Writer,
    check_properties,
)
from iotune.backends.exports_base import Target, is_set, launch_makers, make_all
from iotune.backends.h5py.exports import h5netcdf_open_export, h5py_code, h5py_loader_open
from iotune.backends.h5py.knobs import H5pyKnobs
from iotune.backends.hdf5_family import (
    ALLOC_TIMES,
    CACHE_KNOBS,
    FILE_KNOBS,
    WriteCache,
    attach_dimensions,
    check_alignment,
    dataset_properties,
    file_kwargs,
    file_space,
    h5netcdf_options,
    resolve_file,
    resolve_layout,
    stored_dtype,
    write_cache,
)
from iotune.backends.layout_exports import layout_makers
from iotune.backends.xarray_exports import h5netcdf_export
from iotune.backends.xarray_open import Chunks, open_with, resolve_xarray
from iotune.core.errors import NotApplicable, VerificationError
from iotune.core.units import chunk_label, parse_chunk_label
from iotune.measuring.data import SLAB_BUDGET, write_slab_length
from iotune.model import codecs
from iotune.model.codecs import HDF5_C, HDF5PLUGIN
from iotune.model.readers import ReaderGroup
from iotune.model.records import HINT_VALUES
from iotune.model.spec import StorageSpec, Workload
from iotune.mpi.launch import TYPED_HINTS

DATASET = "data"
#: each rank of a parallel trial holds its block in memory twice, as benchio holds one
MAX_RANK_MEMORY = 4 * 2**30


def open_file(
    path: Path,
    mode: str,
    params: Mapping[str, Any],
    workload: Workload,
    *,
    driver: str | None = None,
    driver_options: Mapping[str, Any] | None = None,
) -> Any:
    """Open an ``h5py.File`` with the trial's file access and creation properties.

    ``sieve_buf_size`` has no ``h5py.File`` keyword: the file access property
    list is then built the way ``h5py.File`` builds it and the sieve size set on it.
    """
    import h5py

    kwargs = file_kwargs(params, workload, create=mode == "w")
    options = dict(driver_options or {})
    sieve = params.get("sieve_buf_size")
    if not sieve:
        return h5py.File(path, mode, driver=driver, **kwargs, **options)
    from h5py._hl import files  # the helpers h5py.File itself uses

    creation = {k: kwargs.pop(k) for k in ("fs_strategy", "fs_page_size") if k in kwargs}
    fapl = files.make_fapl(driver, **kwargs, **options)
    fapl.set_sieve_buf_size(int(sieve))
    fcpl = files.make_fcpl(**creation) if mode == "w" else None
    return h5py.File(files.make_fid(os.fsencode(path), mode, None, fapl, fcpl))


def access_properties(fapl: Any) -> dict[str, Any]:
    """What a file access property list holds: alignment, metadata and sieve sizes, libver."""
    from h5py import h5f

    threshold, interval = fapl.get_alignment()
    names = {getattr(h5f, n): n.removeprefix("LIBVER_").lower() for n in dir(h5f) if "LIBVER_" in n}
    # LATEST is the newest version's own number: say "latest", as a spec does
    names |= {h5f.LIBVER_EARLIEST: "earliest", h5f.LIBVER_LATEST: "latest"}
    low, high = fapl.get_libver_bounds()
    _, slots, nbytes, w0 = fapl.get_cache()
    return {
        "alignment": int(interval),
        "alignment_threshold": int(threshold),
        "meta_block_size": int(fapl.get_meta_block_size()),
        "sieve_buf_size": int(fapl.get_sieve_buf_size()),
        "libver": f"{names.get(low, low)}..{names.get(high, high)}",
        "page_buffer": int(fapl.get_page_buffer_size()[0]),
        "chunk_cache": int(nbytes),
        "cache_slots": int(slots),
        "cache_preemption": float(w0),
    }


def create_dataset(file: Any, workload: Workload, params: Mapping[str, Any]) -> Any:
    """Create the workload's dataset in an open ``h5py.File`` with the trial's layout.

    Serial and parallel (``driver="mpio"``) trials share it, so both store the
    same layout; in a parallel file every rank calls it with the same values.
    """
    codec = codecs.Codec.from_params(params)
    label = parse_chunk_label(params["chunks"])
    chunks: bool | tuple[int, ...] | None = label if isinstance(label, tuple) else None
    if label == "auto" and codec.name != "none":
        chunks = True
    dset = file.create_dataset(
        DATASET,
        shape=workload.shape,
        dtype=workload.dtype,
        chunks=chunks,
        **codecs.h5py_encoding(codec),
        **dataset_kwargs(params),
    )
    for axis, dim in enumerate(workload.dims):
        dset.attrs[f"dim{axis}"] = dim
    attach_dimensions(file, dset, workload)
    return dset


def dataset_kwargs(params: Mapping[str, Any]) -> dict[str, Any]:
    """``fill_time`` and a ``dcpl`` with the allocation time, when the trial sets them."""
    from h5py import h5d, h5p

    kwargs: dict[str, Any] = {}
    if params.get("fill_time"):
        kwargs["fill_time"] = params["fill_time"]
    if params.get("alloc_time"):
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_alloc_time(getattr(h5d, ALLOC_TIMES[params["alloc_time"]]))
        kwargs["dcpl"] = dcpl
    return kwargs


class _H5Writer(Writer):
    def __init__(
        self, path: Path, workload: Workload, params: Mapping[str, Any], cache: WriteCache | None
    ) -> None:
        #: the chunk cache a write in slab order needs, when the trial sets none
        self.cache = cache
        opened = params if cache is None else {**params, "chunk_cache": cache.nbytes}
        self._file = open_file(path, "w", opened, workload)
        self._dset = create_dataset(self._file, workload, params)
        # what the library applied, kept for verify (the file keeps none of it); read
        # out of the property list there, not in this timed open
        self.access = self._file.id.get_access_plist()

    def write(self, start: int, data: np.ndarray) -> None:
        self._dset[start : start + data.shape[0]] = data

    def close(self) -> None:
        self._file.close()


class _H5Reader(Reader):
    def __init__(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> None:
        self._file = open_file(path, "r", params, workload)
        self._dset = self._file[DATASET]

    def read(self, selection: Selection) -> np.ndarray:
        return np.asarray(self._dset[selection])

    def close(self) -> None:
        self._file.close()


class H5pyBackend(SlabBackend, LaunchedBackend):
    """HDF5 files written and read with h5py."""

    name = "h5py"
    default_chunks = "iotune.backends.h5py.defaults:h5py_guess_chunks"
    library = "h5py"
    suffix = ".h5"
    knobs = H5pyKnobs
    target_writer = "iotune.backends.h5py.target:H5Target"
    parameters = H5pyKnobs.names()
    description = "HDF5 files via h5py (+ hdf5plugin filters); parallel HDF5 where built"
    readers = (ReaderGroup(HDF5_C, ("h5dump", "h5repack")), ReaderGroup(HDF5PLUGIN, ("h5py",)))
    rank_program = "iotune.backends.h5py.rank"

    @classmethod
    def loader_open(cls, target: Target) -> tuple[str, list[str]]:
        return h5py_loader_open(target)

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The layout exports, the h5py calls as measured, h5netcdf's read options."""
        makers = layout_makers(settings, target)
        makers["h5py_create_dataset"] = lambda: {"text": h5py_code(settings, target, hints=hints)}
        if is_set(settings, "chunk_cache", "page_buffer"):
            makers["xarray_h5netcdf_open"] = lambda: h5netcdf_open_export(settings, target)
        if settings.get("dask_chunks") is not None:
            makers["xarray_open"] = lambda: h5netcdf_export(settings, target)
        return make_all(makers | launch_makers(settings, hints))

    @classmethod
    def parallel_support(cls) -> tuple[bool, str]:
        """Whether ``nprocs > 1`` can run: h5py built against parallel HDF5, and a launcher."""
        import h5py

        if not h5py.get_config().mpi:
            return False, f"h5py {h5py.__version__} was built without MPI (serial HDF5)"
        from iotune.mpi.launch import find_mpiexec

        try:
            import mpi4py
        except ImportError as err:
            return False, f"h5py was built with MPI but mpi4py does not import: {err}"
        where = find_mpiexec() or "no mpiexec found: set execution.launcher"
        return True, (
            f"parallel HDF5 {h5py.version.hdf5_version} (driver mpio, mpi4py "
            f"{mpi4py.__version__}, {where})"
        )

    @classmethod
    def launches(cls, params: Mapping[str, Any]) -> bool:
        """Trials of more than one process run as launched ranks with the mpio driver."""
        return int(params.get("nprocs") or 1) > 1

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        from iotune.mpi.launch import check_stripe_hints, merge_typed_hints

        codec, effective, notes = resolve_layout(params, cls.parallel_support)
        knobs, file_notes = resolve_file(params, effective["chunks"], FILE_KNOBS + CACHE_KNOBS)
        effective, notes = effective | knobs, notes + file_notes
        n = int(params.get("nprocs", 1))
        dask, more = resolve_xarray(params)
        if n > 1 and dask:
            raise NotApplicable("dask_chunks: a parallel trial reads through its MPI ranks")
        effective, notes = effective | dask, notes + more
        parallel_only = ("io", "hints", "stripe_count", "stripe_size", *TYPED_HINTS)
        if n == 1:
            notes += [f"{k} applies only to nprocs > 1" for k in parallel_only if k in params]
            return effective, notes
        if workload.shape[0] < n:
            raise NotApplicable(
                f"nprocs {n}: each rank writes a block along {workload.dims[0]}, "
                f"which has only {workload.shape[0]} steps"
            )
        # whole steps per rank; a rank holds its block twice (written, read back)
        steps = -(-workload.shape[0] // n)
        if 2 * steps * (workload.nbytes // workload.shape[0]) > MAX_RANK_MEMORY:
            raise NotApplicable(f"a rank of {n} would hold more than 4GiB of its block in memory")
        io = params.get("io", H5pyKnobs.default("io"))
        if knobs.get("page_buffer"):
            raise NotApplicable("page_buffer: HDF5's page buffer does not work in parallel")
        if io == "independent" and codec.name != "none":
            # HDF5 writes filtered chunks in parallel only through collective I/O
            raise NotApplicable("compressed parallel HDF5 writes need io: collective")
        effective |= {"nprocs": n, "io": io}
        typed, hint_values = merge_typed_hints(params, dict(params.get(HINT_VALUES) or {}))
        if "hints" in params or typed:
            check_stripe_hints(params, hint_values)
            hints = params.get("hints", "default")
            effective |= typed | {"hints": hints, HINT_VALUES: hint_values}
        effective |= {k: params[k] for k in ("stripe_count", "stripe_size") if k in params}
        return effective, notes

    def launched_bytes(self, params: Mapping[str, Any], workload: Workload) -> int:
        return workload.nbytes

    def launched_ops(self, params: Mapping[str, Any]) -> int:
        return int(params["nprocs"])  # each rank reads its block in one call

    @classmethod
    def prepare_process(cls) -> None:
        """Forget a plugin path that netCDF4 set for its own HDF5 build.

        netCDF4's import sets ``HDF5_PLUGIN_PATH`` to its bundled plugins; a
        worker spawned from such a process inherits it, and h5py's HDF5 would
        then load filters built for the other HDF5 instead of hdf5plugin's.
        """
        path = os.environ.get("HDF5_PLUGIN_PATH", "")
        if "netCDF4" in path:
            del os.environ["HDF5_PLUGIN_PATH"]
        # registered now, hdf5plugin's filters win over any plugin path set later
        # (reading a user's netCDF file imports netCDF4 in this process too)
        cls.import_library()

    @classmethod
    def import_library(cls) -> None:
        import h5py  # noqa: F401
        import hdf5plugin  # noqa: F401

    @classmethod
    def available(cls) -> tuple[bool, str]:
        ok, version = super().available()
        if not ok:
            return ok, version
        import h5py

        try:
            import hdf5plugin
        except ImportError:
            return True, f"{version} (HDF5 {h5py.version.hdf5_version}; no hdf5plugin)"
        return (
            True,
            f"{version} (HDF5 {h5py.version.hdf5_version}, hdf5plugin {hdf5plugin.version})",
        )

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        slab = write_slab_length(workload, params, budget=self.slab_budget(params) or SLAB_BUDGET)
        writer = _H5Writer(path, workload, params, write_cache(params, workload, slab))
        self._access, self._write_cache = writer.access, writer.cache
        return writer

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        return _H5Reader(path, workload, params)

    def open_dataset(
        self,
        path: Path,
        params: Mapping[str, Any],
        *,
        chunks: Chunks,
        workload: Workload | None = None,
    ) -> Any:
        """``xr.open_dataset(path, engine="h5netcdf", chunks=...)`` with the trial's chunk cache.

        The read-side access properties (chunk cache, page buffer) go to ``h5py.File``
        through ``driver_kwds``, as the ``xarray_h5netcdf_open`` export prints them.
        """
        import xarray as xr

        self.import_library()  # hdf5plugin's filters, before h5netcdf reads a chunk
        options = h5netcdf_options(params, lambda: stored_dtype(path, workload))
        return open_with(xr.open_dataset, path, chunks=chunks, options=options)

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        import h5py

        with h5py.File(path, "r") as fh:
            dset = fh[DATASET]
            plist = dset.id.get_create_plist()
            filters = [plist.get_filter(i) for i in range(plist.get_nfilters())]
            layout = "contiguous" if dset.chunks is None else chunk_label(dset.chunks)
            names = [f[3].decode(errors="replace") for f in filters]
            stored: dict[str, Any] = {"layout": layout, "filters": names}
            stored |= dataset_properties(dset) | file_space(fh)
            if params.get("alignment"):
                threshold = params.get("alignment_threshold") or 1
                stored["aligned_chunks"] = check_alignment(dset, threshold, params["alignment"])
        codec = codecs.Codec.from_params(params)
        ids = [f[0] for f in filters]
        expected = codecs.h5py_expected_filters(codec)
        if ids != expected:
            raise VerificationError(f"file filters are {ids}, asked {expected} for {codec.name}")
        if codec.name == "zlib" and filters[-1][2][0] != codec.level:
            raise VerificationError(f"deflate level is {filters[-1][2][0]}, asked {codec.level}")
        if params["chunks"] != "auto" and layout != params["chunks"]:
            raise VerificationError(f"file chunking is {layout}, asked {params['chunks']}")
        access = getattr(self, "_access", None)  # None: verifying a file made elsewhere
        stored |= access_properties(access) if access is not None else {}
        cache: WriteCache | None = getattr(self, "_write_cache", None)
        if cache is not None:
            stored["write_cache"] = cache.nbytes
        _check_applied(stored, params)
        return stored


def _check_applied(stored: Mapping[str, Any], params: Mapping[str, Any]) -> None:
    """Raise VerificationError where the file or library holds other values than asked."""
    # 0 and absent leave a property at the library's default: nothing to compare
    wanted = {k: params[k] for k in (*FILE_KNOBS, *CACHE_KNOBS) if params.get(k)}
    if "page_size" in wanted:
        wanted["file_space_strategy"] = "page"
        wanted["file_space_page_size"] = wanted.pop("page_size")
    wanted.pop("libver", None)  # stored as the bounds "latest..latest"
    if params.get("libver") and str(stored.get("libver", "")).split("..")[0] != params["libver"]:
        raise VerificationError(
            f"libver bounds are {stored.get('libver')}, asked {params['libver']}"
        )
    check_properties(stored, wanted)
