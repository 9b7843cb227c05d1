"""HDF5 files through h5py, with compression filters from hdf5plugin."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune import codecs
from iotune.backends._hdf5 import resolve_layout
from iotune.backends.base import LaunchedBackend, Reader, Selection, SlabBackend, Writer
from iotune.errors import NotApplicable, VerificationError
from iotune.model.records import HINT_VALUES
from iotune.model.spec import Workload
from iotune.units import chunk_label, parse_chunk_label

DATASET = "data"
#: each rank of a parallel trial holds its block in memory twice, as benchio holds one
MAX_RANK_MEMORY = 4 * 2**30


def cache_kwargs(params: Mapping[str, Any], workload: Workload) -> dict[str, Any]:
    """``rdcc_*`` keywords; the slot count follows HDF5's advice (prime, ~10x the chunks held)."""
    size = params.get("chunk_cache")
    if size is None:
        return {}
    chunks = parse_chunk_label(params["chunks"])
    chunk_bytes = workload.itemsize * int(np.prod(chunks)) if isinstance(chunks, tuple) else 2**16
    return {
        "rdcc_nbytes": size,
        "rdcc_nslots": _prime_at_least(max(521, 10 * size // chunk_bytes)),
        "rdcc_w0": 0.75,
    }


def _prime_at_least(n: int) -> int:
    def prime(k: int) -> bool:
        return k > 1 and all(k % d for d in range(2, int(k**0.5) + 1))

    while not prime(n):
        n += 1
    return n


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
    )
    for axis, dim in enumerate(workload.dims):
        dset.attrs[f"dim{axis}"] = dim
    return dset


class _H5Writer(Writer):
    def __init__(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> None:
        import h5py

        self._file = h5py.File(path, "w", **cache_kwargs(params, workload))
        self._dset = create_dataset(self._file, workload, params)

    def write(self, start: int, data: np.ndarray) -> None:
        self._dset[start : start + data.shape[0]] = data

    def close(self) -> None:
        self._file.close()


class _H5Reader(Reader):
    def __init__(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> None:
        import h5py

        self._file = h5py.File(path, "r", **cache_kwargs(params, workload))
        self._dset = self._file[DATASET]

    def read(self, selection: Selection) -> np.ndarray:
        return np.asarray(self._dset[selection])

    def close(self) -> None:
        self._file.close()


class H5pyBackend(SlabBackend, LaunchedBackend):
    """HDF5 files written and read with h5py."""

    name = "h5py"
    library = "h5py"
    suffix = ".h5"
    parameters = (
        "chunks",
        "codec",
        "level",
        "shuffle",
        "chunk_cache",
        "nprocs",
        "io",
        "hints",
        "stripe_count",
        "stripe_size",
    )
    description = "HDF5 files via h5py (+ hdf5plugin filters); parallel HDF5 where built"
    rank_program = "iotune.backends.h5py_rank"

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
        from iotune.mpi.launch import check_stripe_hints

        codec, effective, notes = resolve_layout(params, cls.parallel_support)
        n = int(params.get("nprocs", 1))
        parallel_only = ("io", "hints", "stripe_count", "stripe_size")
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
        io = params.get("io", "collective")
        if io == "independent" and codec.name != "none":
            # HDF5 writes filtered chunks in parallel only through collective I/O
            raise NotApplicable("compressed parallel HDF5 writes need io: collective")
        effective |= {"nprocs": n, "io": io}
        if "hints" in params:
            hint_values = dict(params.get(HINT_VALUES) or {})
            check_stripe_hints(params, hint_values)
            effective |= {"hints": params["hints"], HINT_VALUES: hint_values}
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
        return _H5Writer(path, workload, params)

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        return _H5Reader(path, workload, params)

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        import h5py

        with h5py.File(path, "r") as fh:
            dset = fh[DATASET]
            plist = dset.id.get_create_plist()
            filters = [plist.get_filter(i) for i in range(plist.get_nfilters())]
            layout = "contiguous" if dset.chunks is None else chunk_label(dset.chunks)
        codec = codecs.Codec.from_params(params)
        ids = [f[0] for f in filters]
        expected = codecs.h5py_expected_filters(codec)
        if ids != expected:
            raise VerificationError(f"file filters are {ids}, asked {expected} for {codec.name}")
        if codec.name == "zlib" and filters[-1][2][0] != codec.level:
            raise VerificationError(f"deflate level is {filters[-1][2][0]}, asked {codec.level}")
        if params["chunks"] != "auto" and layout != params["chunks"]:
            raise VerificationError(f"file chunking is {layout}, asked {params['chunks']}")
        return {"layout": layout, "filters": [f[3].decode(errors="replace") for f in filters]}
