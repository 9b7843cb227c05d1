"""The HDF5 exports: h5py calls as the h5py backend makes them, h5repack, xarray's h5netcdf.

``h5repack`` is offered for every chunked format (:mod:`iotune.backends.layout_exports`);
the h5py calls for the backends whose files h5py wrote; the h5netcdf read
options for the HDF5 backends that set read-side properties.  A knob a tool cannot
express raises :class:`~iotune.core.errors.NotApplicable` with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Target, check_hints, chunk_shape, codec_of
from iotune.backends.h5py.knobs import H5pyKnobs
from iotune.backends.hdf5_family import READ_SIDE, file_kwargs
from iotune.core.errors import NotApplicable
from iotune.model import codecs
from iotune.model.spec import Workload

#: h5repack's --low/--high numbers (H5F_libver_t); "latest" is its -L option
H5REPACK_LIBVER = {"earliest": 0, "v18": 1, "v110": 2, "v112": 3, "v114": 4}


def h5py_filter_args(codec: codecs.Codec) -> list[str]:
    """``create_dataset`` keyword text for a codec: the h5py backend's own filter, printed."""
    plugin, keywords = codecs.h5py_filter(codec)
    args = [f"**{plugin.code()}"] if plugin else []
    return args + [
        f'{k}="{v}"' if isinstance(v, str) else f"{k}={v!r}" for k, v in keywords.items()
    ]


def h5py_code(
    settings: Mapping[str, Any], target: Target, *, hints: Mapping[str, Any] | None = None
) -> str:
    """h5py calls that create the dataset as measured; with the mpio driver when ``nprocs > 1``."""
    codec, chunks = codec_of(settings), chunk_shape(settings)
    knobs = H5pyKnobs.of(settings)
    nprocs = int(knobs.nprocs)
    lines = ["import h5py"]
    if codec.info.family not in ("none", "zlib"):
        # netCDF4's import points HDF5_PLUGIN_PATH at filters built for its own HDF5,
        # and hdf5plugin then leaves them in place: h5py fails in the filter callback
        lines += ["import hdf5plugin  # before netCDF4 is imported, if it is at all"]
    opened = ['path, "w"']
    opened += [f"{k}={v!r}" for k, v in h5py_file_kwargs(settings, target).items()]
    lines += h5py_sieve_note(settings)
    if nprocs > 1:
        lines += ["from mpi4py import MPI", "info = MPI.Info.Create()"]
        lines += [f"info.Set({k!r}, {v!r})" for k, v in check_hints(hints or {}).items()]
        opened += ['driver="mpio"', "comm=MPI.COMM_WORLD", "info=info"]
    lines.append(f"f = h5py.File({', '.join(opened)})")
    args = [repr(target.variable), f"shape={tuple(target.shape)}", f"dtype={target.dtype!r}"]
    if chunks == "auto" and codec.info.family != "none":
        args.append("chunks=True")  # h5py's own guess, as the backend leaves it
    elif chunks not in ("auto", "contiguous"):  # auto without a codec: contiguous
        args.append(f"chunks={tuple(chunks)}")
    before, extra = h5py_dataset_lines(settings)
    lines += before
    lines.append(f"dset = f.create_dataset({', '.join(args + h5py_filter_args(codec) + extra)})")
    lines += h5py_dimension_lines(target)
    if nprocs > 1 and knobs.io == "collective":
        lines += [
            "with dset.collective:  # every rank writes its own block of steps",
            "    dset[start:stop] = block",
        ]
    return "\n".join(lines)


def h5py_dimension_lines(target: Target) -> list[str]:
    """Name the dataset's dimensions as netCDF-4 does (dimension scales), as the backend does."""
    note = "This is a netCDF dimension but not a netCDF variable."
    sizes = dict(zip(target.dims, target.shape, strict=True))
    return [
        f"for axis, (dim, size) in enumerate({sizes!r}.items()):",
        '    scale = f.create_dataset(dim, shape=(size,), dtype="f4")  # never written: no storage',
        f'    scale.make_scale(f"{note}{{size:10d}}")',
        "    dset.dims[axis].attach_scale(scale)  # xarray (h5netcdf) opens it with these names",
    ]


def h5py_file_kwargs(settings: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """``h5py.File`` keywords for the knobs (and chunk cache), as the h5py backend opens it."""
    workload = Workload(target.dims, target.shape, target.dtype)
    labelled = dict(settings) | {"chunks": str(settings.get("chunks") or "auto")}
    return file_kwargs(labelled, workload, create=True)


def h5py_dataset_lines(settings: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Lines before ``create_dataset`` and its extra arguments: fill time, allocation time."""
    lines, args = [], []
    if settings.get("fill_time"):
        args.append(f"fill_time={settings['fill_time']!r}")
    if settings.get("alloc_time"):
        const = f"ALLOC_TIME_{str(settings['alloc_time']).upper()}"
        lines += [
            "dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)",
            f"dcpl.set_alloc_time(h5py.h5d.{const})",
        ]
        args.append("dcpl=dcpl")
    return lines, args


def h5py_sieve_note(settings: Mapping[str, Any]) -> list[str]:
    """``sieve_buf_size`` has no ``h5py.File`` keyword: the low-level calls that set it."""
    if not settings.get("sieve_buf_size"):
        return []
    return [
        "# sieve_buf_size has no h5py.File keyword: build the file access property list",
        "# fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS); "
        f"fapl.set_sieve_buf_size({int(settings['sieve_buf_size'])})",
        "# f = h5py.File(h5py.h5f.create(path.encode(), h5py.h5f.ACC_TRUNC, fapl=fapl))",
    ]


def xarray_h5netcdf_open(settings: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """``xr.open_dataset(path, **this)``: the read-side HDF5 properties through h5netcdf."""
    kwargs = {k: v for k, v in h5py_file_kwargs(settings, target).items() if k in READ_SIDE}
    if not kwargs:
        raise NotApplicable("no read-side HDF5 property (chunk cache, page buffer) was set")
    return {"engine": "h5netcdf", "driver_kwds": kwargs}


def h5netcdf_open_export(settings: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """The ``xarray_h5netcdf_open`` export: the open call and its keywords."""
    found = xarray_h5netcdf_open(settings, target)
    return {"text": f"ds = xr.open_dataset(path, **{found!r})", "value": found}


def h5repack_args(settings: Mapping[str, Any], target: Target) -> list[str]:
    """``h5repack`` options: ``-l var:CHUNK=AxBxC`` (or ``CONTI``) and ``-f var:FILTER``."""
    var = target.variable
    args: list[str] = h5repack_file_args(settings)
    chunks = chunk_shape(settings)
    if chunks == "contiguous":
        args += ["-l", f"{var}:CONTI"]
    elif chunks != "auto":
        args += ["-l", f"{var}:CHUNK={'x'.join(map(str, chunks))}"]
    codec = codec_of(settings)
    if codec.info.family == "none":
        return [*args, "-f", f"{var}:NONE"]
    for fid, values in codecs.hdf5_filters(codec):
        if fid == codecs.HDF5_SHUFFLE_FILTER:
            spec = "SHUF"
        elif codec.info.family == "zlib":
            spec = f"GZIP={codec.level}"
        else:  # UD=<filter id>,<flag: 0 mandatory>,<number of values>,<values...>
            spec = f"UD={fid},0,{len(values)},{','.join(map(str, values))}"
        args += ["-f", f"{var}:{spec}"]
    return args


def h5repack_file_args(settings: Mapping[str, Any]) -> list[str]:
    """``h5repack`` options for alignment, metadata block, paging and libver."""
    args: list[str] = []
    if settings.get("alignment"):
        args += ["-a", str(int(settings["alignment"]))]
        args += ["-t", str(int(H5pyKnobs.of(settings).alignment_threshold))]
    if settings.get("meta_block_size"):
        args += ["-M", str(int(settings["meta_block_size"]))]
    if settings.get("page_size"):
        args += ["-S", "PAGE", "-G", str(int(settings["page_size"]))]
    libver = settings.get("libver")
    if libver == "latest":
        args.append("-L")
    elif libver:
        args.append(f"--low={H5REPACK_LIBVER[libver]}")
    # fill_time, alloc_time and sieve_buf_size have no h5repack option: see the h5py export
    return args


def h5py_loader_open(target: Target) -> tuple[str, list[str]]:
    """A loader worker's h5py open of the dataset."""
    return "import h5py", [
        'self._file = h5py.File(self.path, "r")',
        f"self._array = self._file[{target.variable!r}]",
    ]
