"""netCDF4 files through netCDF4-python (HDF5 underneath)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.base import Reader, Selection, SlabBackend, Writer, check_properties
from iotune.backends.exports_base import Target, is_set, launch_makers, make_all
from iotune.backends.h5py.exports import h5netcdf_open_export
from iotune.backends.hdf5_family import (
    CACHE_KNOBS,
    FILE_KNOBS,
    WriteCache,
    resolve_file,
    resolve_layout,
    write_cache,
)
from iotune.backends.layout_exports import layout_makers
from iotune.backends.netcdf4.exports import netcdf4_loader_open
from iotune.backends.netcdf4.knobs import NetCDF4Knobs
from iotune.backends.xarray_exports import netcdf4_cache_lines, open_export
from iotune.backends.xarray_open import Chunks, open_with, resolve_xarray
from iotune.core.errors import NotApplicable, VerificationError
from iotune.core.units import chunk_label, parse_chunk_label
from iotune.measuring.data import SLAB_BUDGET, write_slab_length
from iotune.model import codecs, quantize
from iotune.model.codecs import HDF5_C, HDF5PLUGIN
from iotune.model.readers import ReaderGroup
from iotune.model.spec import StorageSpec, Workload

VARIABLE = "data"
#: the HDF5 knobs netCDF-C lets a program set (nc_set_alignment, nc_set_var_chunk_cache)
HDF5_KNOBS = tuple(k for k in NetCDF4Knobs.names() if k in (*FILE_KNOBS, *CACHE_KNOBS))


class _NCWriter(Writer):
    def __init__(
        self, path: Path, workload: Workload, params: Mapping[str, Any], cache: WriteCache | None
    ) -> None:
        #: what netCDF-C applied, for verify: a netCDF-3 file keeps no fill mode, no file
        #: keeps the alignment
        self.applied: dict[str, Any] = {}
        self._ds = _create(path, params, self.applied)
        for dim, size in zip(workload.dims, workload.shape, strict=True):
            self._ds.createDimension(dim, size)
        layout: dict[str, Any] = {}
        chunks = parse_chunk_label(params["chunks"])
        if chunks == "contiguous":
            layout["contiguous"] = True
        elif chunks != "auto":
            layout["chunksizes"] = chunks
        encoding = codecs.netcdf4_encoding(codecs.Codec.from_params(params))
        lossy = quantize.netcdf4_kwargs(quantize.Quantize.from_params(params))
        # fill_value=False is nc_def_var_fill(NC_NOFILL), which netCDF-3 files honour too
        nofill = {"fill_value": False} if params.get("fill") == "off" else {}
        self._var = self._ds.createVariable(
            VARIABLE, workload.dtype, workload.dims, **layout, **encoding, **lossy, **nofill
        )
        self.applied["fill"] = "off" if self._var.get_fill_value() is None else "on"
        _set_cache(self._var, params)
        if cache is not None:
            slots = self._var.get_var_chunk_cache()[1]
            self._var.set_var_chunk_cache(size=cache.nbytes, nelems=max(slots, cache.chunks))
            self.applied["write_cache"] = cache.nbytes

    def write(self, start: int, data: np.ndarray) -> None:
        self._var[start : start + data.shape[0]] = data

    def close(self) -> None:
        self._ds.close()


class _NCReader(Reader):
    def __init__(self, path: Path, params: Mapping[str, Any]) -> None:
        import netCDF4

        self._ds = netCDF4.Dataset(path, "r")
        self._var = self._ds.variables[VARIABLE]
        self._var.set_auto_maskandscale(False)
        _set_cache(self._var, params)

    def read(self, selection: Selection) -> np.ndarray:
        return np.asarray(self._var[selection])

    def close(self) -> None:
        self._ds.close()


def _create(path: Path, params: Mapping[str, Any], applied: dict[str, Any]) -> Any:
    """Create the file; netCDF-C's alignment is global, so it is set just for this call.

    The alignment netCDF-C holds while the file is created goes into ``applied``.
    """
    import netCDF4

    knobs = NetCDF4Knobs.of(params)
    fmt: Any = knobs.format
    if not knobs.alignment:
        return netCDF4.Dataset(path, "w", format=fmt)
    before = netCDF4.get_alignment()
    netCDF4.set_alignment(knobs.alignment_threshold, knobs.alignment)
    applied["alignment"] = netCDF4.get_alignment()[1]
    try:
        return netCDF4.Dataset(path, "w", format=fmt)
    finally:
        # once set, netCDF-C hands (0, 0) to H5Pset_alignment, which fails every later
        # create ("HDF error"); (1, 1) is HDF5's own default, aligning nothing
        netCDF4.set_alignment(*before if before[1] else (1, 1))


def _set_cache(var: Any, params: Mapping[str, Any]) -> None:
    size, slots, w0 = (params.get(k) for k in ("chunk_cache", "cache_slots", "cache_preemption"))
    if size is None and slots is None and w0 is None:
        return
    now = var.get_var_chunk_cache()
    var.set_var_chunk_cache(
        size=now[0] if size is None else size,
        nelems=now[1] if slots is None else slots,
        preemption=now[2] if w0 is None else w0,
    )


def _default_cache(params: Mapping[str, Any]) -> tuple[Any, ...]:
    """Make the trial's chunk cache netCDF-C's default; return the closer that restores it."""
    size, slots, w0 = (params.get(k) for k in ("chunk_cache", "cache_slots", "cache_preemption"))
    if size is None and slots is None and w0 is None:
        return ()
    import netCDF4

    before = netCDF4.get_chunk_cache()
    netCDF4.set_chunk_cache(
        size=before[0] if size is None else size,
        nelems=before[1] if slots is None else slots,
        preemption=before[2] if w0 is None else w0,
    )
    return (lambda: netCDF4.set_chunk_cache(*before),)


def _check_classic(effective: dict[str, Any]) -> None:
    """What a netCDF-3 file cannot hold: chunks, codecs, HDF5 properties, quantisation."""
    if effective["chunks"] != "contiguous":
        raise NotApplicable("format NETCDF3_64BIT_DATA stores no chunks: use chunks: contiguous")
    if effective["codec"] != "none":
        raise NotApplicable("format NETCDF3_64BIT_DATA has no compression")
    hdf5 = [k for k in HDF5_KNOBS if effective.get(k)]
    if hdf5:
        raise NotApplicable(f"{', '.join(hdf5)}: a NETCDF3_64BIT_DATA file is not HDF5")
    if effective.get("quantize", "off") != "off":
        raise NotApplicable("quantize: netCDF-C quantises only netCDF-4 files")


class NetCDF4Backend(SlabBackend):
    """netCDF4/HDF5 files written and read with netCDF4-python."""

    name = "netcdf4"
    default_chunks = "iotune.backends.netcdf4.defaults:netcdf_default_chunks"
    library = "netCDF4"
    suffix = ".nc"
    knobs = NetCDF4Knobs
    target_writer = "iotune.backends.netcdf4.target:NetcdfTarget"
    parameters = NetCDF4Knobs.names()
    description = "netCDF4 (HDF5) files via netCDF4-python"
    readers = (
        ReaderGroup(HDF5_C, ("ncdump", "nccopy", "netcdf4-python", "xarray-netcdf4")),
        ReaderGroup(HDF5PLUGIN, ("h5netcdf", "xarray-h5netcdf", "h5py")),
    )

    @classmethod
    def loader_open(cls, target: Target) -> tuple[str, list[str]]:
        return netcdf4_loader_open(target)

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The layout exports, h5netcdf's read options when a chunk cache was set, and the
        ``open_dataset`` line of a point read through xarray (``dask_chunks``)."""
        makers = layout_makers(settings, target)
        if is_set(settings, "chunk_cache", "page_buffer"):
            makers["xarray_h5netcdf_open"] = lambda: h5netcdf_open_export(settings, target)
        if settings.get("dask_chunks") is not None:
            before = netcdf4_cache_lines(settings)
            makers["xarray_open"] = lambda: open_export(
                settings, target, engine="netcdf4", before=before
            )
        return make_all(makers | launch_makers(settings, hints))

    @classmethod
    def parallel_support(cls) -> tuple[bool, str]:
        """Whether netCDF4 was built with parallel HDF5 or PnetCDF."""
        import netCDF4

        if not (netCDF4.__has_parallel4_support__ or netCDF4.__has_pnetcdf_support__):
            return False, (
                f"netCDF4 {netCDF4.__version__} was built without parallel HDF5 or PnetCDF "
                "(__has_parallel4_support__ and __has_pnetcdf_support__ are false)"
            )
        return False, "netCDF4 has MPI, but iotune's parallel netCDF trials are not implemented yet"

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        codec, effective, notes = resolve_layout(params, cls.parallel_support)
        codecs.netcdf4_encoding(codec)  # raises NotApplicable for what netCDF4 cannot do
        knobs, more = resolve_file(params, effective["chunks"], HDF5_KNOBS, library="netCDF-C")
        effective, notes = effective | knobs, notes + more
        effective |= {k: params[k] for k in ("fill", "format", "quantize") if k in params}
        dask, more = resolve_xarray(params)
        effective, notes = effective | dask, notes + more
        quantize.check_dtype(quantize.Quantize.from_params(effective), workload.dtype)
        if effective.get("format") == "NETCDF3_64BIT_DATA":
            _check_classic(effective)
        return effective, notes

    @classmethod
    def available(cls) -> tuple[bool, str]:
        ok, version = super().available()
        if not ok:
            return ok, version
        import netCDF4

        libs = f"netCDF {netCDF4.__netcdf4libversion__}, HDF5 {netCDF4.__hdf5libversion__}"
        return True, f"{version} ({libs})"

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        slab = write_slab_length(workload, params, budget=self.slab_budget(params) or SLAB_BUDGET)
        writer = _NCWriter(path, workload, params, write_cache(params, workload, slab))
        self._applied = writer.applied
        return writer

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        return _NCReader(path, params)

    def open_dataset(
        self,
        path: Path,
        params: Mapping[str, Any],
        *,
        chunks: Chunks,
        workload: Workload | None = None,
    ) -> Any:
        """``xr.open_dataset(path, engine="netcdf4", chunks=...)``, with the trial's chunk cache.

        xarray sets no per-variable cache: the trial's is netCDF-C's default for files
        opened from now on (``netCDF4.set_chunk_cache``) until the Dataset is closed.
        """
        import xarray as xr

        restore = _default_cache(params)
        options = {"engine": "netcdf4"}
        return open_with(xr.open_dataset, path, chunks=chunks, closers=restore, options=options)

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        import netCDF4

        with netCDF4.Dataset(path, "r") as ds:
            var = ds.variables[VARIABLE]
            # a netCDF-3 variable has neither filters nor chunking (both None)
            filters, chunking = var.filters() or {}, var.chunking()
            stored: dict[str, Any] = {
                "format": ds.data_model,
                "fill": "off" if var.get_fill_value() is None else "on",
                "fill_read_back_from": "file",
                "quantize": _quantization(var),
            }
        layout = "contiguous" if chunking in ("contiguous", None) else chunk_label(chunking)
        expected = codecs.netcdf4_expected_filters(codecs.Codec.from_params(params))
        wrong = {k: (filters.get(k), v) for k, v in expected.items() if filters.get(k, False) != v}
        if wrong:
            detail = ", ".join(f"{k}={got!r} (asked {want!r})" for k, (got, want) in wrong.items())
            raise VerificationError(f"file filters differ from the request: {detail}")
        if params["chunks"] != "auto" and layout != params["chunks"]:
            raise VerificationError(f"file chunking is {layout}, asked {params['chunks']}")
        # netCDF-C keeps the alignment for files it creates later, not in the file; the
        # chunks' offsets are checked with h5py by the tests (two HDF5 builds in one
        # process make netCDF-C's next create fail)
        if params.get("alignment"):
            stored["alignment"] = self._applied.get("alignment")
        if self._applied.get("write_cache"):
            stored["write_cache"] = self._applied["write_cache"]
        if stored["format"] == "NETCDF3_64BIT_DATA":
            fill = self._applied.get("fill")
            stored |= {"fill": fill, "fill_read_back_from": "library"}
        asked = {k: params[k] for k in ("fill", "format", "quantize") if k in params}
        check_properties(stored, asked)
        return {"layout": layout, "filters": filters, **stored}


def _quantization(var: Any) -> str:
    """The variable's quantisation as the vocabulary writes it (``off``, ``digits:3``)."""
    found = var.quantization()
    if not found:
        return "off"
    modes = {v: k for k, v in quantize.NETCDF_MODES.items()}
    return f"{modes[found[1]]}:{found[0]}"
