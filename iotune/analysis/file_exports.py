"""File-level knobs as code and commands: HDF5 properties, netCDF modes, Zarr config, POSIX.

The counterpart of :mod:`iotune.analysis.exports` for what is not a chunk or a
codec.  ``settings`` is one grid point's effective parameters; a knob a tool
cannot express raises :class:`~iotune.core.errors.NotApplicable` with the reason.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from iotune.core.errors import NotApplicable
from iotune.core.units import format_size
from iotune.model import quantize

#: h5repack's --low/--high numbers (H5F_libver_t); "latest" is its -L option
H5REPACK_LIBVER = {"earliest": 0, "v18": 1, "v110": 2, "v112": 3, "v114": 4}
#: nccopy's -k kinds
NCCOPY_KINDS = {"NETCDF4": "nc4", "NETCDF4_CLASSIC": "nc7", "NETCDF3_64BIT_DATA": "cdf5"}
#: HDF5 access properties h5netcdf hands to h5py.File when xarray opens a file
_READ_SIDE = ("rdcc_nbytes", "rdcc_nslots", "rdcc_w0", "page_buf_size")


def _set(settings: Mapping[str, Any], *names: str) -> bool:
    return any(settings.get(n) for n in names)


def h5py_file_kwargs(settings: Mapping[str, Any], target: Any) -> dict[str, Any]:
    """``h5py.File`` keywords for the knobs (and chunk cache), as the h5py backend opens it."""
    from iotune.backends.h5py_ import file_kwargs
    from iotune.model.spec import Workload

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


def h5repack_file_args(settings: Mapping[str, Any]) -> list[str]:
    """``h5repack`` options for alignment, metadata block, paging and libver."""
    args: list[str] = []
    if settings.get("alignment"):
        args += ["-a", str(int(settings["alignment"]))]
        args += ["-t", str(int(settings.get("alignment_threshold") or 1))]
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


def xarray_h5netcdf_open(settings: Mapping[str, Any], target: Any) -> dict[str, Any]:
    """``xr.open_dataset(path, **this)``: the read-side HDF5 properties through h5netcdf."""
    kwargs = {k: v for k, v in h5py_file_kwargs(settings, target).items() if k in _READ_SIDE}
    if not kwargs:
        raise NotApplicable("no read-side HDF5 property (chunk cache, page buffer) was set")
    return {"engine": "h5netcdf", "driver_kwds": kwargs}


def netcdf4_file_lines(settings: Mapping[str, Any]) -> list[str]:
    """netCDF4-python lines around ``createVariable``: alignment, format, cache details."""
    lines = []
    if settings.get("alignment"):
        threshold = int(settings.get("alignment_threshold") or 1)
        lines.append(
            f"netCDF4.set_alignment({threshold}, {int(settings['alignment'])})"
            "  # before creating the file"
        )
    fmt = settings.get("format") or "NETCDF4"
    lines.append(f'nc = netCDF4.Dataset(path, "w", format={fmt!r})')
    return lines


def netcdf4_variable_kwargs(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``createVariable`` keywords for fill mode and quantisation."""
    kwargs: dict[str, Any] = {}
    if settings.get("fill") == "off":
        kwargs["fill_value"] = False
    return kwargs | quantize.netcdf4_kwargs(quantize.Quantize.from_params(settings))


def netcdf4_cache_line(settings: Mapping[str, Any]) -> str | None:
    """``set_var_chunk_cache`` with size, slots and preemption, when any is set."""
    names = {"chunk_cache": "size", "cache_slots": "nelems", "cache_preemption": "preemption"}
    args = [f"{kw}={settings[k]!r}" for k, kw in names.items() if settings.get(k) is not None]
    return f"var.set_var_chunk_cache({', '.join(args)})" if args else None


def nccopy_file_args(settings: Mapping[str, Any]) -> list[str]:
    """nccopy's ``-k`` for the format; quantisation and fill modes it cannot set."""
    if quantize.Quantize.from_params(settings).lossy:
        raise NotApplicable("nccopy cannot quantise; use the netCDF4-python export")
    fmt = settings.get("format")
    return ["-k", NCCOPY_KINDS[fmt]] if fmt else []


def zarr_config_code(settings: Mapping[str, Any]) -> str:
    """``zarr.config.set`` for async concurrency and writing empty chunks."""
    config: dict[str, Any] = {}
    if settings.get("request_concurrency") is not None:
        config["async.concurrency"] = int(settings["request_concurrency"])
    if settings.get("write_empty_chunks"):
        config["array.write_empty_chunks"] = settings["write_empty_chunks"] == "on"
    if not config:
        raise NotApplicable("the sweep set no zarr configuration")
    return f"import zarr\nzarr.config.set({config!r})"


def zarr_array_code(settings: Mapping[str, Any], target: Any) -> str:
    """``zarr.create_array`` with quantising filters and the shard index location."""
    q = quantize.Quantize.from_params(settings)
    index = settings.get("shard_index")
    if not q.lossy and not index:
        raise NotApplicable("neither quantisation nor a shard index location was set")
    args = ["store", f"shape={tuple(target.shape)}", f"dtype={target.dtype!r}"]
    if index and settings.get("shards") not in (None, "none"):
        shape = tuple(int(n) for n in str(settings["shards"]).split("x"))
        args.append(f"shards={{'shape': {shape}, 'index_location': {index!r}}}")
    if q.lossy:
        (made,) = quantize.zarr_filters(q)
        args.append(
            f"filters=[zarr.codecs.numcodecs.{type(made).__name__}(**{made.codec_config!r})]"
        )
    return (
        "import zarr\nimport zarr.codecs.numcodecs\narr = zarr.create_array("
        + ", ".join(args)
        + ")"
    )


def posix_code(settings: Mapping[str, Any]) -> str:
    """Python ``os`` calls that write as the posix trial did."""
    flags = ["os.O_WRONLY", "os.O_CREAT"]
    flags += ["os.O_DIRECT"] if settings.get("direct") == "on" else []
    flags += ["os.O_DSYNC"] if settings.get("sync") == "dsync" else []
    lines = ["import os", f"fd = os.open(path, {' | '.join(flags)}, 0o644)"]
    if settings.get("preallocate") == "on":
        lines.append("os.posix_fallocate(fd, 0, total_bytes)")
    lines.append(f"# pwrite in {format_size(int(settings.get('transfer_size') or 2**20))} pieces")
    if settings.get("direct") == "on":
        lines.append("# O_DIRECT: page-aligned buffers, offsets and sizes")
    end = {"fdatasync": "os.fdatasync(fd)", "dsync": None}.get(str(settings.get("sync")))
    lines += [end] if end else ([] if settings.get("sync") == "dsync" else ["os.fsync(fd)"])
    fadvise = settings.get("fadvise")
    if fadvise and fadvise != "none":
        advice = f"os.POSIX_FADV_{str(fadvise).upper()}"
        lines.append(f"# reading: os.posix_fadvise(fd, 0, 0, {advice})")
    return "\n".join([*lines, "os.close(fd)"])


def fio_args(settings: Mapping[str, Any], target: Any) -> list[str]:
    """A ``fio`` job writing the same bytes the same way, to compare with iotune's figure."""
    import numpy as np

    total = int(np.prod(target.shape)) * target.itemsize
    args = ["fio", "--name=iotune", "--rw=write", "--ioengine=psync"]
    args += [f"--bs={int(settings.get('transfer_size') or 2**20)}", f"--size={total}"]
    args.append(f"--fallocate={'posix' if settings.get('preallocate') == 'on' else 'none'}")
    if settings.get("direct") == "on":
        args.append("--direct=1")
    sync = settings.get("sync") or "fsync"
    args += {"fsync": ["--end_fsync=1"], "fdatasync": ["--end_fsync=1"], "dsync": ["--sync=dsync"]}[
        sync
    ]
    return args


def extra_makers(settings: Mapping[str, Any], target: Any) -> dict[str, Any]:
    """The exports of the file-level knobs a point sets, as ``name -> make()``."""
    backend = settings.get("backend")
    makers: dict[str, Any] = {}
    if backend == "posix":
        makers["posix_os_calls"] = lambda: {"text": posix_code(settings)}
        makers["fio"] = lambda: {
            "text": shlex.join(fio_args(settings, target)),
            "value": fio_args(settings, target),
        }
    if backend in ("h5py", "netcdf4") and _set(settings, "chunk_cache", "page_buffer"):
        makers["xarray_h5netcdf_open"] = lambda: {
            "text": f"ds = xr.open_dataset(path, **{xarray_h5netcdf_open(settings, target)!r})",
            "value": xarray_h5netcdf_open(settings, target),
        }
    if backend == "zarr" and _set(settings, "request_concurrency", "write_empty_chunks"):
        makers["zarr_config"] = lambda: {"text": zarr_config_code(settings)}
    lossy = quantize.Quantize.from_params(settings).lossy
    if backend == "zarr" and (_set(settings, "shard_index") or lossy):
        makers["zarr_create_array"] = lambda: {"text": zarr_array_code(settings, target)}
    return makers
