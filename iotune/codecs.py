"""One codec vocabulary, mapped onto each backend's API in one place.

A :class:`Codec` is what a user means ("zstd at level 3 with byte shuffle");
the ``<backend>_encoding`` functions translate it into the keywords a library
takes, and raise :class:`~iotune.errors.NotApplicable` with the reason when the
library cannot express it.  Backends never keep codec tables of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iotune.errors import NotApplicable

SHUFFLES = ("none", "byte", "bit")


@dataclass(frozen=True)
class CodecInfo:
    """What the vocabulary knows about one codec name."""

    name: str
    family: str  # none | zlib | bzip2 | zstd | blosc
    min_level: int
    max_level: int
    default_level: int | None
    blosc_cname: str | None = None

    def level_range(self) -> str:
        return f"{self.min_level}..{self.max_level}"


def _blosc(cname: str) -> CodecInfo:
    return CodecInfo(f"blosc-{cname}", "blosc", 1, 9, 4, blosc_cname=cname)


CODECS: dict[str, CodecInfo] = {
    info.name: info
    for info in (
        CodecInfo("none", "none", 0, 0, None),
        CodecInfo("zlib", "zlib", 1, 9, 4),
        CodecInfo("bzip2", "bzip2", 1, 9, 4),
        CodecInfo("zstd", "zstd", 1, 22, 4),
        _blosc("lz4"),
        _blosc("lz4hc"),
        _blosc("zstd"),
        _blosc("zlib"),
        _blosc("blosclz"),
    )
}


def parse_codec_name(value: object) -> str:
    """Return a known codec name or raise ``ValueError`` listing the choices."""
    if not isinstance(value, str) or value not in CODECS:
        raise ValueError(f"unknown codec {value!r}; allowed: {', '.join(CODECS)}")
    return value


def parse_shuffle(value: object) -> str:
    """Return ``none``, ``byte`` or ``bit``; YAML booleans mean none/byte."""
    if value is True:
        return "byte"
    if value is False:
        return "none"
    if not isinstance(value, str) or value not in SHUFFLES:
        raise ValueError(f"unknown shuffle {value!r}; allowed: {', '.join(SHUFFLES)}")
    return value


@dataclass(frozen=True)
class Codec:
    """A fully resolved codec choice.

    ``level`` and ``shuffle`` are ``None`` where they do not apply (``none``)
    and are validated against the codec at construction.
    """

    name: str
    level: int | None = None
    shuffle: str = "none"

    def __post_init__(self) -> None:
        info = CODECS[parse_codec_name(self.name)]
        parse_shuffle(self.shuffle)
        if info.family == "none":
            return
        if self.level is None or not info.min_level <= self.level <= info.max_level:
            raise NotApplicable(
                f"level {self.level} is out of range for codec {self.name!r} "
                f"(allowed {info.level_range()})"
            )
        if self.shuffle == "bit" and info.family != "blosc":
            raise NotApplicable(
                f"bit shuffle is available only with blosc codecs, not {self.name!r}"
            )

    @property
    def info(self) -> CodecInfo:
        return CODECS[self.name]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "level": self.level, "shuffle": self.shuffle}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Codec:
        return cls(name=data["name"], level=data.get("level"), shuffle=data.get("shuffle", "none"))


def resolve(name: str, level: int | None, shuffle: str | None) -> tuple[Codec, list[str]]:
    """Fill in defaults and drop what does not apply.

    Returns the codec and notes on parameters that were given but do not
    apply (a level for ``none``), so callers can explain merged grid points.
    Impossible combinations raise :class:`NotApplicable`.
    """
    info = CODECS[parse_codec_name(name)]
    notes = []
    if info.family == "none":
        if level is not None:
            notes.append("level does not apply to codec 'none'")
        if shuffle not in (None, "none"):
            notes.append("shuffle does not apply to codec 'none'")
        return Codec("none", None, "none"), notes
    level = info.default_level if level is None else level
    if shuffle is None:
        shuffle = "byte" if info.family in ("zlib", "blosc") else "none"
    return Codec(name, level, shuffle), notes


# --- netCDF4-python ---------------------------------------------------------

_NC_BLOSC_SHUFFLE = {"none": 0, "byte": 1, "bit": 2}
_NC_BLOSC_NAME = {"blosclz": "lz"}  # netCDF4-python's spelling of blosc's own compressor


def _nc_blosc(codec: Codec) -> str:
    cname = codec.info.blosc_cname or ""
    return f"blosc_{_NC_BLOSC_NAME.get(cname, cname)}"


def netcdf4_encoding(codec: Codec) -> dict[str, Any]:
    """Keywords for ``netCDF4.Dataset.createVariable``.

    netCDF4-python applies HDF5's shuffle filter only together with zlib, so
    byte shuffle with bzip2 or zstd is not applicable there.
    """
    family = codec.info.family
    if family == "none":
        return {"compression": None, "shuffle": False}
    if family == "blosc":
        return {
            "compression": _nc_blosc(codec),
            "complevel": codec.level,
            "blosc_shuffle": _NC_BLOSC_SHUFFLE[codec.shuffle],
            "shuffle": False,
        }
    if codec.shuffle != "none" and family != "zlib":
        raise NotApplicable(
            f"netCDF4-python applies the shuffle filter only with zlib, not {codec.name!r}"
        )
    return {"compression": family, "complevel": codec.level, "shuffle": codec.shuffle == "byte"}


def netcdf4_expected_filters(codec: Codec) -> dict[str, Any]:
    """What ``Variable.filters()`` must report for a variable written with ``codec``."""
    family = codec.info.family
    expected: dict[str, Any] = {name: False for name in ("zlib", "zstd", "bzip2", "blosc")}
    expected["shuffle"] = family == "zlib" and codec.shuffle == "byte"
    if family == "none":
        return expected
    expected["complevel"] = codec.level
    if family == "blosc":
        expected["blosc"] = {
            "compressor": _nc_blosc(codec),
            "shuffle": _NC_BLOSC_SHUFFLE[codec.shuffle],
        }
    else:
        expected[family] = True
    return expected


# --- h5py (filters from hdf5plugin) -------------------------------------------

H5_FILTER_IDS = {"shuffle": 2, "zlib": 1, "bzip2": 307, "zstd": 32015, "blosc": 32001}
_H5_BLOSC_SHUFFLE = {"none": 0, "byte": 1, "bit": 2}


def h5py_encoding(codec: Codec) -> dict[str, Any]:
    """Keywords for ``h5py.Group.create_dataset``.

    h5py can put HDF5's shuffle filter in front of any compressor; blosc
    shuffles (byte or bit) inside its own filter instead.
    """
    family = codec.info.family
    if family == "none":
        return {}
    if family == "blosc":
        import hdf5plugin

        cname = codec.info.blosc_cname
        return dict(
            hdf5plugin.Blosc(
                cname=cname, clevel=codec.level, shuffle=_H5_BLOSC_SHUFFLE[codec.shuffle]
            )
        )
    shuffle = {"shuffle": codec.shuffle == "byte"}
    if family == "zlib":
        return {"compression": "gzip", "compression_opts": codec.level, **shuffle}
    import hdf5plugin

    if family == "bzip2":
        return {**hdf5plugin.BZip2(blocksize=codec.level), **shuffle}
    return {**hdf5plugin.Zstd(clevel=codec.level), **shuffle}


def h5py_expected_filters(codec: Codec) -> list[int]:
    """HDF5 filter ids, in pipeline order, that a dataset written with ``codec`` has."""
    family = codec.info.family
    if family == "none":
        return []
    ids = [H5_FILTER_IDS["shuffle"]] if codec.shuffle == "byte" and family != "blosc" else []
    return [*ids, H5_FILTER_IDS[family]]


# --- zarr-python 3 (Zarr format 3) --------------------------------------------


def zarr_compressors(codec: Codec, *, itemsize: int) -> list[Any] | None:
    """The ``compressors`` (bytes-to-bytes codecs) for ``zarr.create_array``.

    Byte shuffle outside blosc is numcodecs' Shuffle ahead of the compressor,
    as HDF5's shuffle filter is ahead of deflate.
    """
    import zarr.codecs as zc

    family = codec.info.family
    if family == "none":
        return None
    if family == "blosc":
        shuffle = {"none": "noshuffle", "byte": "shuffle", "bit": "bitshuffle"}[codec.shuffle]
        return [
            zc.BloscCodec(
                cname=codec.info.blosc_cname, clevel=codec.level, shuffle=shuffle, typesize=itemsize
            )
        ]
    chain = [zc.Shuffle(elementsize=itemsize)] if codec.shuffle == "byte" else []
    if family == "zlib":
        return [*chain, zc.Zlib(level=codec.level)]
    if family == "bzip2":
        return [*chain, zc.BZ2(level=codec.level)]
    return [*chain, zc.ZstdCodec(level=codec.level)]


# --- numcodecs (in-memory codec screening) --------------------------------------


def numcodecs_pipeline(codec: Codec, *, itemsize: int) -> list[Any]:
    """numcodecs objects applied in order to a chunk's bytes (shuffle, then compressor)."""
    import numcodecs

    family = codec.info.family
    if family == "none":
        return []
    if family == "blosc":
        shuffle = {
            "none": numcodecs.Blosc.NOSHUFFLE,
            "byte": numcodecs.Blosc.SHUFFLE,
            "bit": numcodecs.Blosc.BITSHUFFLE,
        }[codec.shuffle]
        return [
            numcodecs.Blosc(
                cname=codec.info.blosc_cname, clevel=codec.level, shuffle=shuffle, typesize=itemsize
            )
        ]
    chain = [numcodecs.Shuffle(elementsize=itemsize)] if codec.shuffle == "byte" else []
    compressor = {"zlib": numcodecs.Zlib, "bzip2": numcodecs.BZ2, "zstd": numcodecs.Zstd}[family]
    return [*chain, compressor(level=codec.level)]
