"""A configuration as code and commands to paste: encodings, nccopy, h5repack, lfs, hints.

Every function takes plain data: ``settings`` is one grid point's effective
parameters (as stored in a results Dataset's ``effective`` variable: ``chunks``
label, ``codec``, ``level``, ``shuffle``, ``chunk_cache``, ``shards``,
``stripe_count``, ``stripe_size``, ...) and a :class:`Target` names the variable,
its dimensions and dtype.  MPI-IO hints are a plain ``{key: value}`` dict.  A
setting a tool cannot express raises :class:`~iotune.core.errors.NotApplicable` with
the reason; :func:`all_exports` collects those as notes.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iotune.analysis import file_exports, object_exports
from iotune.core.errors import NotApplicable
from iotune.core.units import parse_chunk_label
from iotune.model import codecs, quantize
from iotune.model.spec import StorageSpec

#: nccopy ignores chunk specs for chunks smaller than this unless given ``-M``
NCCOPY_MIN_CHUNK = 8192
PLUGIN_NOTE = (
    "filters other than deflate and shuffle need their HDF5 plugin on HDF5_PLUGIN_PATH, "
    "e.g. export HDF5_PLUGIN_PATH=$(python -c 'import hdf5plugin; print(hdf5plugin.PLUGIN_PATH)')"
)


@dataclass(frozen=True)
class Target:
    """The variable the exports describe."""

    variable: str
    dims: tuple[str, ...]
    shape: tuple[int, ...]
    dtype: str

    @property
    def itemsize(self) -> int:
        import numpy as np

        return np.dtype(self.dtype).itemsize


def codec_of(settings: Mapping[str, Any]) -> codecs.Codec:
    """The :class:`~iotune.model.codecs.Codec` of a settings dict (``none`` when absent)."""
    return codecs.resolve_params(settings)[0]


def chunk_shape(settings: Mapping[str, Any]) -> str | tuple[int, ...]:
    """``"contiguous"``, ``"auto"`` or the chunk shape (``"auto"`` when not set)."""
    label = settings.get("chunks") or "auto"
    return parse_chunk_label(str(label))


# --- xarray -------------------------------------------------------------------------


def xarray_netcdf4_encoding(settings: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """``encoding=`` for ``Dataset.to_netcdf(engine="netcdf4")``, keyed by variable."""
    encoding = dict(codecs.netcdf4_encoding(codec_of(settings)))
    if encoding.get("compression") is None:
        encoding.pop("compression")
    chunks = chunk_shape(settings)
    if chunks == "contiguous":
        encoding["contiguous"] = True
    elif chunks != "auto":
        encoding["chunksizes"] = list(chunks)
    encoding |= quantize.netcdf4_kwargs(quantize.Quantize.from_params(settings))
    return {target.variable: encoding}


def zarr_compressors(settings: Mapping[str, Any], target: Target) -> list[dict[str, Any]]:
    """The Zarr v3 ``compressors`` as codec metadata (``{"name", "configuration"}``)."""
    calls = codecs.zarr_codecs(codec_of(settings), itemsize=target.itemsize)
    return [call.zarr_metadata() for call in calls]


def xarray_zarr_encoding(settings: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """``encoding=`` for ``Dataset.to_zarr(zarr_format=3)`` with codecs as metadata dicts.

    :func:`zarr_encoding_code` gives the same with zarr codec objects, to paste.
    """
    encoding: dict[str, Any] = {"compressors": zarr_compressors(settings, target)}
    chunks = chunk_shape(settings)
    if chunks == "contiguous":
        encoding["chunks"] = list(target.shape)
    elif chunks != "auto":
        encoding["chunks"] = list(chunks)
    shards = settings.get("shards")
    if shards not in (None, "none"):
        encoding["shards"] = list(parse_chunk_label(str(shards)))
    lossy = quantize.zarr_filters(quantize.Quantize.from_params(settings))
    if lossy:
        encoding["filters"] = [f.to_dict() for f in lossy]
    return {target.variable: encoding}


def zarr_encoding_code(settings: Mapping[str, Any], target: Target) -> str:
    """Python that builds the Zarr encoding with the zarr backend's own codec objects."""
    (encoding,) = xarray_zarr_encoding(settings, target).values()
    calls = codecs.zarr_codecs(codec_of(settings), itemsize=target.itemsize)
    made = [call.code() for call in calls]
    parts = [
        f"{k!r}: {tuple(v)!r}" for k, v in encoding.items() if k not in ("compressors", "filters")
    ]
    if "filters" in encoding:
        parts.append(f"'filters': {encoding['filters']!r}")
    parts.append(f"'compressors': ({', '.join(made)}{',' if len(made) == 1 else ''})")
    return f"import zarr\nencoding = {{{target.variable!r}: {{{', '.join(parts)}}}}}"


# --- netCDF4-python -----------------------------------------------------------------


def netcdf4_create_variable(settings: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """Keyword arguments of ``netCDF4.Dataset.createVariable`` beyond name, dtype, dims."""
    kwargs = dict(codecs.netcdf4_encoding(codec_of(settings)))
    chunks = chunk_shape(settings)
    if chunks == "contiguous":
        kwargs["contiguous"] = True
    elif chunks != "auto":
        kwargs["chunksizes"] = list(chunks)
    return kwargs | file_exports.netcdf4_variable_kwargs(settings)


def netcdf4_code(settings: Mapping[str, Any], target: Target) -> str:
    """The ``createVariable`` call (and the chunk cache call) as Python to paste."""
    kwargs = netcdf4_create_variable(settings, target)
    args = [repr(target.variable), repr(target.dtype), repr(tuple(target.dims))]
    args += [f"{k}={tuple(v) if isinstance(v, list) else v!r}" for k, v in kwargs.items()]
    lines = ["import netCDF4", *file_exports.netcdf4_file_lines(settings)]
    lines.append(f"var = nc.createVariable({', '.join(args)})")
    cache = file_exports.netcdf4_cache_line(settings)
    return "\n".join(lines + ([cache] if cache else []))


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
    nprocs = int(settings.get("nprocs") or 1)
    lines = ["import h5py"]
    if codec.info.family not in ("none", "zlib"):
        # netCDF4's import points HDF5_PLUGIN_PATH at filters built for its own HDF5,
        # and hdf5plugin then leaves them in place: h5py fails in the filter callback
        lines += ["import hdf5plugin  # before netCDF4 is imported, if it is at all"]
    opened = ['path, "w"']
    opened += [f"{k}={v!r}" for k, v in file_exports.h5py_file_kwargs(settings, target).items()]
    lines += file_exports.h5py_sieve_note(settings)
    if nprocs > 1:
        lines += ["from mpi4py import MPI", "info = MPI.Info.Create()"]
        lines += [f"info.Set({k!r}, {v!r})" for k, v in _check_hints(hints or {}).items()]
        opened += ['driver="mpio"', "comm=MPI.COMM_WORLD", "info=info"]
    lines.append(f"f = h5py.File({', '.join(opened)})")
    args = [repr(target.variable), f"shape={tuple(target.shape)}", f"dtype={target.dtype!r}"]
    if chunks == "auto" and codec.info.family != "none":
        args.append("chunks=True")  # h5py's own guess, as the backend leaves it
    elif chunks not in ("auto", "contiguous"):  # auto without a codec: contiguous
        args.append(f"chunks={tuple(chunks)}")
    before, extra = file_exports.h5py_dataset_lines(settings)
    lines += before
    lines.append(f"dset = f.create_dataset({', '.join(args + h5py_filter_args(codec) + extra)})")
    if nprocs > 1 and settings.get("io", "collective") == "collective":
        lines += [
            "with dset.collective:  # every rank writes its own block of steps",
            "    dset[start:stop] = block",
        ]
    return "\n".join(lines)


# --- command-line tools -------------------------------------------------------------


def nccopy_args(settings: Mapping[str, Any], target: Target) -> list[str]:
    """``nccopy`` options that give ``target.variable`` these chunks and filters.

    Chunks as ``-c dim/n,...`` (``-c var:contiguous``), with ``-M 0`` for chunks
    under 8 KiB, which nccopy otherwise quietly leaves contiguous; zlib as ``-d LEVEL`` plus
    ``-s`` for shuffle; other codecs as ``-F "var,ID,params"`` (bzip2 307, blosc
    32001, zstd 32015), after ``-F "var,2"`` for a byte shuffle.
    """
    args: list[str] = file_exports.nccopy_file_args(settings)
    chunks = chunk_shape(settings)
    if chunks == "contiguous":
        args += ["-c", f"{target.variable}:contiguous"]
    elif isinstance(chunks, tuple):
        spec = ",".join(f"{d}/{n}" for d, n in zip(target.dims, chunks, strict=True))
        args += ["-c", spec]
        if math.prod(chunks) * target.itemsize < NCCOPY_MIN_CHUNK:
            args += ["-M", "0"]  # else nccopy silently keeps such small chunks contiguous
    codec = codec_of(settings)
    if codec.info.family == "none":
        return [*args, "-d", "0"]
    if codec.info.family == "zlib":
        return [*args, "-d", str(codec.level), *(["-s"] if codec.shuffle == "byte" else [])]
    for fid, values in codecs.hdf5_filters(codec):
        args += ["-F", ",".join(map(str, [target.variable, fid, *values]))]
    return args


def h5repack_args(settings: Mapping[str, Any], target: Target) -> list[str]:
    """``h5repack`` options: ``-l var:CHUNK=AxBxC`` (or ``CONTI``) and ``-f var:FILTER``."""
    var = target.variable
    args: list[str] = file_exports.h5repack_file_args(settings)
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


def lfs_setstripe_args(settings: Mapping[str, Any], directory: str = "DIR") -> list[str]:
    """``lfs setstripe -c COUNT -S SIZE DIR`` for the stripe settings.

    Raises
    ------
    NotApplicable
        Neither ``stripe_count`` nor ``stripe_size`` is set.
    """
    count, size = settings.get("stripe_count"), settings.get("stripe_size")
    if count is None and size is None:
        raise NotApplicable("the sweep set no Lustre stripe parameters")
    args = ["lfs", "setstripe"]
    if count is not None:
        args += ["-c", str(int(count))]
    if size is not None:
        args += ["-S", _lfs_size(int(size))]
    return [*args, directory]


def _lfs_size(nbytes: int) -> str:
    """Sizes as ``lfs`` spells them: ``4M``, ``64K``, ``1G`` (binary units)."""
    for unit, factor in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if nbytes % factor == 0:
            return f"{nbytes // factor}{unit}"
    return str(nbytes)


def _check_hints(hints: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for key, value in hints.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        for bad in (":", ",", "=", " ", "\n"):
            if bad in str(key) or bad in text:
                raise NotApplicable(f"hint {key}={value!r} contains {bad!r}, which hints cannot")
        out[str(key)] = text
    return out


def mpich_hints(hints: Mapping[str, Any], *, pattern: str = "*") -> str:
    """``MPICH_MPIIO_HINTS`` value: ``pattern:key=value:key=value`` (Cray/HPE MPICH).

    Raises
    ------
    NotApplicable
        No hints (the defaults need no variable) or a value that cannot be written.
    """
    clean = _check_hints(hints)
    if not clean:
        raise NotApplicable("the winning hint set is empty: the MPI library defaults")
    return ":".join([pattern, *(f"{k}={v}" for k, v in clean.items())])


def romio_hints_file(hints: Mapping[str, Any]) -> str:
    """A ROMIO hints file (``key value`` per line); point ``ROMIO_HINTS`` at it."""
    clean = _check_hints(hints)
    if not clean:
        raise NotApplicable("the winning hint set is empty: the MPI library defaults")
    return "".join(f"{k} {v}\n" for k, v in clean.items())


# --- everything at once -------------------------------------------------------------


def all_exports(
    settings: Mapping[str, Any],
    target: Target,
    *,
    hints: Mapping[str, Any] | None = None,
    storage: StorageSpec | None = None,
) -> dict[str, dict[str, Any]]:
    """Every export that applies, keyed by name.

    Each value has ``text`` (to paste) and, for structured exports, ``value``
    (JSON-friendly); an export the settings cannot be expressed in has only
    ``unavailable`` (the reason).  Chunk and codec exports are left out for the
    ``posix`` and ``object`` backends, which have neither; stripe and hint exports appear
    only when the settings carry them.  ``storage``: the object store the sweep
    measured, for the object-store backends' exports (:mod:`iotune.analysis.object_exports`).
    """
    makers: dict[str, Any] = {}
    if settings.get("backend") not in ("posix", "object"):
        makers |= {
            "xarray_netcdf4_encoding": lambda: _structured(
                xarray_netcdf4_encoding(settings, target)
            ),
            "xarray_zarr_encoding": lambda: {
                "text": zarr_encoding_code(settings, target),
                "value": xarray_zarr_encoding(settings, target),
            },
            "netcdf4_create_variable": lambda: {
                "text": netcdf4_code(settings, target),
                "value": netcdf4_create_variable(settings, target),
            },
            "nccopy": lambda: _command(
                ["nccopy", *nccopy_args(settings, target), "in.nc", "out.nc"]
            ),
            "h5repack": lambda: _command(
                ["h5repack", *h5repack_args(settings, target), "in.h5", "out.h5"]
            ),
        }
    # the calls the measured files were made with (hdf5-object's before their upload)
    if settings.get("backend") in ("h5py", "hdf5-object"):
        makers["h5py_create_dataset"] = lambda: {"text": h5py_code(settings, target, hints=hints)}
    makers |= file_exports.extra_makers(settings, target)
    makers |= object_exports.extra_makers(settings, target, storage)
    if "stripe_count" in settings or "stripe_size" in settings:
        makers["lfs_setstripe"] = lambda: _command(lfs_setstripe_args(settings))
    if hints is not None:
        makers["mpich_mpiio_hints"] = lambda: {
            "text": f"export MPICH_MPIIO_HINTS={shlex.quote(mpich_hints(hints))}",
            "value": mpich_hints(hints),
        }
        makers["romio_hints_file"] = lambda: {
            "text": romio_hints_file(hints) + "# then: export ROMIO_HINTS=/path/to/this/file",
            "value": romio_hints_file(hints),
        }
    out = {}
    for name, make in makers.items():
        try:
            out[name] = make()
        except NotApplicable as err:
            out[name] = {"unavailable": str(err)}
    return out


def _structured(value: dict[str, Any]) -> dict[str, Any]:
    return {"text": f"encoding = {value!r}", "value": value}


def _command(argv: list[str]) -> dict[str, Any]:
    return {"text": shlex.join(argv), "value": argv}
