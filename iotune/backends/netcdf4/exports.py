"""The netCDF-4 exports: xarray's netCDF4 encoding, netCDF4-python calls, nccopy.

Every chunked format offers them (:mod:`iotune.backends.layout_exports`): a layout
measured in Zarr or HDF5 is written alike in a netCDF-4 file.  ``settings`` is one
grid point's effective parameters; a knob a tool cannot express raises
:class:`~iotune.core.errors.NotApplicable` with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Target, chunk_shape, codec_of
from iotune.backends.netcdf4.knobs import NetCDF4Knobs
from iotune.core.errors import NotApplicable
from iotune.model import codecs, quantize

#: nccopy ignores chunk specs for chunks smaller than this unless given ``-M``
NCCOPY_MIN_CHUNK = 8192
#: nccopy's -k kinds
NCCOPY_KINDS = {"NETCDF4": "nc4", "NETCDF4_CLASSIC": "nc7", "NETCDF3_64BIT_DATA": "cdf5"}


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


def xarray_netcdf4_export(settings: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """The encoding to paste, with the ``to_netcdf`` call when the file format is not
    xarray's default and a note for the fill mode, which xarray cannot turn off."""
    value = xarray_netcdf4_encoding(settings, target)
    lines = [f"encoding = {value!r}"]
    fmt = settings.get("format")
    if fmt and fmt != "NETCDF4":
        lines.append(f"ds.to_netcdf(path, format={fmt!r}, engine='netcdf4', encoding=encoding)")
    if NetCDF4Knobs.of(settings).fill == "off":
        lines.append("# fill=off: xarray cannot turn netCDF's fill mode off; the netCDF4-python")
        lines.append("# export below does (fill_value=False)")
    return {"text": "\n".join(lines), "value": value}


def netcdf4_create_variable(settings: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """Keyword arguments of ``netCDF4.Dataset.createVariable`` beyond name, dtype, dims."""
    kwargs = dict(codecs.netcdf4_encoding(codec_of(settings)))
    chunks = chunk_shape(settings)
    if chunks == "contiguous":
        kwargs["contiguous"] = True
    elif chunks != "auto":
        kwargs["chunksizes"] = list(chunks)
    return kwargs | netcdf4_variable_kwargs(settings)


def netcdf4_code(settings: Mapping[str, Any], target: Target) -> str:
    """The ``createVariable`` call (and the chunk cache call) as Python to paste."""
    kwargs = netcdf4_create_variable(settings, target)
    args = [repr(target.variable), repr(target.dtype), repr(tuple(target.dims))]
    args += [f"{k}={tuple(v) if isinstance(v, list) else v!r}" for k, v in kwargs.items()]
    lines = ["import netCDF4", *netcdf4_file_lines(settings)]
    lines.append(f"var = nc.createVariable({', '.join(args)})")
    cache = netcdf4_cache_line(settings)
    return "\n".join(lines + ([cache] if cache else []))


def netcdf4_file_lines(settings: Mapping[str, Any]) -> list[str]:
    """netCDF4-python lines around ``createVariable``: alignment, format, cache details."""
    knobs, lines = NetCDF4Knobs.of(settings), []
    if knobs.alignment:
        lines.append(
            f"netCDF4.set_alignment({int(knobs.alignment_threshold)}, {int(knobs.alignment)})"
            "  # before creating the file"
        )
    lines.append(f'nc = netCDF4.Dataset(path, "w", format={knobs.format!r})')
    return lines


def netcdf4_variable_kwargs(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``createVariable`` keywords for fill mode and quantisation."""
    kwargs: dict[str, Any] = {}
    if NetCDF4Knobs.of(settings).fill == "off":
        kwargs["fill_value"] = False
    return kwargs | quantize.netcdf4_kwargs(quantize.Quantize.from_params(settings))


def netcdf4_cache_line(settings: Mapping[str, Any]) -> str | None:
    """``set_var_chunk_cache`` with size, slots and preemption, when any is set."""
    names = {"chunk_cache": "size", "cache_slots": "nelems", "cache_preemption": "preemption"}
    args = [f"{kw}={settings[k]!r}" for k, kw in names.items() if settings.get(k) is not None]
    return f"var.set_var_chunk_cache({', '.join(args)})" if args else None


def nccopy_args(settings: Mapping[str, Any], target: Target) -> list[str]:
    """``nccopy`` options that give ``target.variable`` these chunks and filters.

    Chunks as ``-c dim/n,...`` (``-c var:contiguous``), with ``-M 0`` for chunks
    under 8 KiB, which nccopy otherwise quietly leaves contiguous; zlib as ``-d LEVEL`` plus
    ``-s`` for shuffle; other codecs as ``-F "var,ID,params"`` (bzip2 307, blosc
    32001, zstd 32015), after ``-F "var,2"`` for a byte shuffle.
    """
    args: list[str] = nccopy_file_args(settings)
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


def nccopy_file_args(settings: Mapping[str, Any]) -> list[str]:
    """nccopy's ``-k`` for the format; quantisation and fill modes it cannot set."""
    if quantize.Quantize.from_params(settings).lossy:
        raise NotApplicable("nccopy cannot quantise; use the netCDF4-python export")
    fmt = settings.get("format")
    return ["-k", NCCOPY_KINDS[fmt]] if fmt else []


def netcdf4_loader_open(target: Target) -> tuple[str, list[str]]:
    """A loader worker's netCDF4-python open: raw values, as iotune's reader reads them."""
    return "import netCDF4", [
        'self._file = netCDF4.Dataset(self.path, "r")',
        f"self._array = self._file.variables[{target.variable!r}]",
        "self._array.set_auto_maskandscale(False)",
    ]
