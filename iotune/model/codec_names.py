"""The reverse of :mod:`iotune.model.codecs`: what a library reports, in iotune's names.

Read through the one table there (:data:`~iotune.model.codecs.FAMILIES`), so a
codec is spelled once per library: a report names the codec a file holds as a spec
names it (``zstd 4``, ``zlib 4 + shuffle``, ``none``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.core.errors import NotApplicable
from iotune.model.codecs import BLOSC_SHUFFLE, CODECS, FAMILIES, ZARR_SHUFFLE, Codec


def codec_text(codec: Codec) -> str:
    """A codec in iotune's words, as a spec names it: ``zstd 4``, ``zlib 4 + shuffle``, ``none``."""
    if codec.info.family == "none":
        return "none"
    shuffle = {"none": "", "byte": " + shuffle", "bit": " + bitshuffle"}[codec.shuffle]
    return f"{codec.name} {codec.level}{shuffle}"


def family_of(spelling: str | int) -> str:
    """The iotune family of a library's spelling: a zarr or numcodecs class, a Zarr v3
    codec name, an HDF5 filter id or an h5py/netCDF compression name.

    Raises
    ------
    NotApplicable
        The spelling is no codec iotune names (szip, lzf, an unregistered filter).
    """
    if spelling == "gzip":  # h5py's name for deflate
        return "zlib"
    for family, spelled in FAMILIES.items():
        names = {family, spelled.hdf5_filter, spelled.numcodecs, *spelled.zarr}
        if spelled.hdf5plugin is not None:
            names.add(spelled.hdf5plugin[0])
        if spelling in names or (isinstance(spelling, str) and spelling.lower() == family):
            return family
    raise NotApplicable(f"{spelling!r} is not a codec iotune names (allowed: {', '.join(CODECS)})")


def codec_of_encoding(encoding: Mapping[str, Any]) -> Codec:
    """The codec of a variable as a library reports it: xarray's encoding of a netCDF4 or
    HDF5 variable (``zlib``/``zstd``/... flags, ``complevel``, ``shuffle``; or h5netcdf's
    ``compression`` and ``compression_opts``), netCDF4-python's ``filters()``, or a Zarr
    array's ``compressors`` and ``filters`` (zarr or numcodecs objects).

    Raises
    ------
    NotApplicable
        A compressor iotune has no name for.
    """
    chain = [*(encoding.get("filters") or ()), *(encoding.get("compressors") or ())]
    if chain and not isinstance(encoding.get("filters"), dict):
        return _codec_of_chain(chain)
    shuffle = "byte" if encoding.get("shuffle") else "none"
    if encoding.get("szip"):
        raise NotApplicable("'szip' is not a codec iotune names")
    blosc = encoding.get("blosc")
    if isinstance(blosc, Mapping) and blosc:  # netCDF4-python: {"compressor", "shuffle"}
        cname = str(blosc.get("compressor", "")).removeprefix("blosc_")
        shuffles = {code: name for name, (code, _) in BLOSC_SHUFFLE.items()}
        level = encoding.get("complevel")
        name = f"blosc-{'blosclz' if cname == 'lz' else cname}"
        return Codec(name, level, shuffles[blosc["shuffle"]])
    for family in ("zstd", "bzip2", "zlib"):
        if encoding.get(family):
            return Codec(family, encoding.get("complevel"), shuffle)
    compression = encoding.get("compression")
    if compression:
        return Codec(family_of(compression), encoding.get("compression_opts"), shuffle)
    return Codec("none")


def _codec_of_chain(chain: list[Any]) -> Codec:
    """A zarr array's codec objects (a shuffle, then one compressor) as a :class:`Codec`."""
    shuffle, found = "none", None
    for obj in chain:
        name = type(obj).__name__
        config = dict(getattr(obj, "codec_config", None) or {})  # numcodecs' zarr 3 wrappers
        if name == ZARR_SHUFFLE[0]:
            shuffle = "byte"
            continue
        if found is not None:
            raise NotApplicable(f"two compressors ({found.name} and {name}) in one chain")
        family = family_of(name)
        level = config.get("level", getattr(obj, "level", None))
        if family == "blosc":
            cname = str(getattr(getattr(obj, "cname", ""), "value", getattr(obj, "cname", "")))
            mode = str(getattr(getattr(obj, "shuffle", ""), "value", getattr(obj, "shuffle", "")))
            modes = {spelled: name for name, (_, spelled) in BLOSC_SHUFFLE.items()}
            found = Codec(f"blosc-{cname}", getattr(obj, "clevel", None), modes.get(mode, "none"))
        else:
            found = Codec(family, level, "none")
    if found is None:
        return Codec("none")
    if found.info.family == "blosc":  # blosc shuffles inside its own codec
        return found
    return Codec(found.name, found.level, shuffle)
