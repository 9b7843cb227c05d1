"""One codec vocabulary, and one table of how each library spells it.

A :class:`Codec` is what a user means ("zstd at level 3 with byte shuffle"), built
once from a trial's parameters with :meth:`Codec.from_params`.  The views below
translate it for one library each and raise :class:`~iotune.core.errors.NotApplicable`
when the library cannot express it; backends and exports both use them.  A codec
object is a :class:`Call`, which a backend builds and an export prints as code.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral
from typing import Any

from iotune.core.errors import NotApplicable

SHUFFLES = ("none", "byte", "bit")
#: blosc's shuffle modes: the number its HDF5 filter, netCDF4 and numcodecs take, and its
#: name (zarr's spelling; upper-cased, hdf5plugin's constant)
BLOSC_SHUFFLE = {"none": (0, "noshuffle"), "byte": (1, "shuffle"), "bit": (2, "bitshuffle")}
#: blosc's compressor codes, the 7th value of the HDF5 blosc filter's parameters
BLOSC_CODES = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "snappy": 3, "zlib": 4, "zstd": 5}
#: HDF5's shuffle filter (https://github.com/HDFGroup/hdf5_plugins lists the registered ids)
HDF5_SHUFFLE_FILTER = 2


@dataclass(frozen=True)
class Family:
    """How each library names one compressor family."""

    hdf5_filter: int  # registered HDF5 filter id
    hdf5plugin: tuple[str, str] | None  # class and its level keyword (None: deflate is built in)
    zarr: tuple[str, str]  # zarr.codecs class and its name in Zarr v3 metadata
    numcodecs: str  # numcodecs class; netCDF4-python's names are the family names


FAMILIES: dict[str, Family] = {
    "zlib": Family(1, None, ("Zlib", "numcodecs.zlib"), "Zlib"),
    "bzip2": Family(307, ("BZip2", "blocksize"), ("BZ2", "numcodecs.bz2"), "BZ2"),
    "zstd": Family(32015, ("Zstd", "clevel"), ("ZstdCodec", "zstd"), "Zstd"),
    "blosc": Family(32001, ("Blosc", "clevel"), ("BloscCodec", "blosc"), "Blosc"),
}
#: byte shuffle ahead of a compressor, as zarr.codecs (and numcodecs) name it
ZARR_SHUFFLE = ("Shuffle", "numcodecs.shuffle")


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
        *(_blosc(cname) for cname in ("lz4", "lz4hc", "zstd", "zlib", "blosclz")),
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


def parse_level(value: object, info: CodecInfo) -> int | None:
    """The level as an ``int`` (``None`` for ``none``): ``ValueError`` for what is no
    whole number, :class:`~iotune.core.errors.NotApplicable` for one outside the range."""
    if info.family == "none":
        if value is not None:
            raise NotApplicable(f"level {value!r} does not apply to codec 'none' (allowed: None)")
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # a level read back from JSON or a float coordinate
    if value is not None and (isinstance(value, bool) or not isinstance(value, Integral)):
        raise ValueError(
            f"level {value!r} is not an integer; allowed for {info.name!r}: {info.level_range()}"
        )
    if value is None or not info.min_level <= int(value) <= info.max_level:
        raise NotApplicable(
            f"level {value} is out of range for codec {info.name!r} (allowed {info.level_range()})"
        )
    return int(value)


@dataclass(frozen=True)
class Codec:
    """A fully resolved codec choice, validated at construction.

    ``level`` is ``None`` and ``shuffle`` is ``none`` for the codec ``none``.
    Out-of-range levels and bit shuffle outside blosc raise
    :class:`~iotune.core.errors.NotApplicable`; values of the wrong kind ``ValueError``.
    """

    name: str
    level: int | None
    shuffle: str

    def __init__(self, name: str, level: int | None = None, shuffle: str = "none") -> None:
        info = CODECS[parse_codec_name(name)]
        shuffle = parse_shuffle(shuffle)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "level", parse_level(level, info))
        object.__setattr__(self, "shuffle", shuffle)
        if info.family == "none" and shuffle != "none":
            raise NotApplicable(
                f"shuffle {shuffle!r} does not apply to codec 'none' (allowed: none)"
            )
        if shuffle == "bit" and info.family != "blosc":
            raise NotApplicable(
                f"bit shuffle is available only with blosc codecs, not {name!r} "
                "(allowed: none, byte)"
            )

    @property
    def info(self) -> CodecInfo:
        return CODECS[self.name]

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Codec:
        """The codec of a trial's effective parameters (keys ``codec``, ``level``, ``shuffle``).

        A missing ``codec`` is ``none``; nothing else is filled in (see :func:`resolve_params`).
        """
        return cls(
            params.get("codec") or "none", params.get("level"), params.get("shuffle", "none")
        )

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "level": self.level, "shuffle": self.shuffle}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Codec:
        unknown = sorted(set(data) - {"name", "level", "shuffle"})
        if unknown:
            raise ValueError(f"unknown codec key {unknown[0]!r}; allowed: name, level, shuffle")
        return cls(data["name"], data.get("level"), data.get("shuffle", "none"))


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


def resolve_params(params: Mapping[str, Any]) -> tuple[Codec, list[str]]:
    """:func:`resolve` on the ``codec``, ``level`` and ``shuffle`` of (spec) parameters."""
    return resolve(params.get("codec") or "none", params.get("level"), params.get("shuffle"))


# --- codec objects: built by backends, printed by exports -------------------------


@dataclass(frozen=True)
class Ref:
    """A constant an export prints by name (``hdf5plugin.Blosc.SHUFFLE``) and its value."""

    code: str
    value: Any


@dataclass(frozen=True)
class Call:
    """``module.name(**kwargs)``: :meth:`build` makes the object, :meth:`code` prints it."""

    module: str
    name: str
    kwargs: dict[str, Any]
    zarr_name: str | None = None  # the codec's name in Zarr v3 metadata

    def build(self) -> Any:
        cls = getattr(importlib.import_module(self.module), self.name)
        return cls(**{k: v.value if isinstance(v, Ref) else v for k, v in self.kwargs.items()})

    def code(self) -> str:
        args = (f"{k}={v.code if isinstance(v, Ref) else repr(v)}" for k, v in self.kwargs.items())
        return f"{self.module}.{self.name}({', '.join(args)})"

    def zarr_metadata(self) -> dict[str, Any]:
        """``{"name", "configuration"}`` of a zarr codec, as its keyword arguments give it."""
        return {"name": self.zarr_name, "configuration": dict(self.kwargs)}


# --- netCDF4-python ---------------------------------------------------------


def _nc_blosc(codec: Codec) -> str:
    cname = codec.info.blosc_cname or ""
    return f"blosc_{'lz' if cname == 'blosclz' else cname}"  # netCDF4-python's spelling


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
            "blosc_shuffle": BLOSC_SHUFFLE[codec.shuffle][0],
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
        blosc = {"compressor": _nc_blosc(codec), "shuffle": BLOSC_SHUFFLE[codec.shuffle][0]}
        expected["blosc"] = blosc
    else:
        expected[family] = True
    return expected


# --- HDF5 filters (h5py with hdf5plugin, nccopy, h5repack) --------------------------


def hdf5_filters(codec: Codec) -> list[tuple[int, tuple[int, ...]]]:
    """HDF5 filter ids and client values, in pipeline order, of a dataset written with ``codec``.

    A byte shuffle outside blosc is HDF5's shuffle filter ahead of the compressor;
    blosc shuffles (byte or bit) inside its own filter.
    """
    family = codec.info.family
    if family == "none":
        return []
    fid, level = FAMILIES[family].hdf5_filter, int(codec.level or 0)
    if family == "blosc":
        cname = BLOSC_CODES[codec.info.blosc_cname or "blosclz"]
        # the first four are reserved and filled in by the filter itself
        return [(fid, (0, 0, 0, 0, level, BLOSC_SHUFFLE[codec.shuffle][0], cname))]
    shuffle = [(HDF5_SHUFFLE_FILTER, ())] if codec.shuffle == "byte" else []
    return [*shuffle, (fid, (level,))]


def h5py_expected_filters(codec: Codec) -> list[int]:
    """HDF5 filter ids, in pipeline order, that a dataset written with ``codec`` has."""
    return [fid for fid, _values in hdf5_filters(codec)]


def h5py_filter(codec: Codec) -> tuple[Call | None, dict[str, Any]]:
    """The hdf5plugin filter (``None``: none or deflate) and plain ``create_dataset`` keywords.

    h5py can put HDF5's shuffle filter in front of any compressor; blosc
    shuffles (byte or bit) inside its own filter instead.
    """
    family = codec.info.family
    if family == "none":
        return None, {}
    shuffle = {"shuffle": codec.shuffle == "byte"}
    if family == "zlib":
        return None, {"compression": "gzip", "compression_opts": codec.level, **shuffle}
    cls, level_keyword = FAMILIES[family].hdf5plugin or ("", "")  # only deflate has none
    if family == "blosc":
        code, name = BLOSC_SHUFFLE[codec.shuffle]
        kwargs: dict[str, Any] = {"cname": codec.info.blosc_cname, "clevel": codec.level}
        kwargs["shuffle"] = Ref(f"hdf5plugin.Blosc.{name.upper()}", code)
        return Call("hdf5plugin", cls, kwargs), {}
    return Call("hdf5plugin", cls, {level_keyword: codec.level}), shuffle


def h5py_encoding(codec: Codec) -> dict[str, Any]:
    """Keywords for ``h5py.Group.create_dataset``."""
    plugin, keywords = h5py_filter(codec)
    return {**(dict(plugin.build()) if plugin else {}), **keywords}


# --- chunk codecs: zarr-python 3 (Zarr format 3) and numcodecs ----------------------


def _chunk_codecs(codec: Codec, itemsize: int, module: str) -> list[Call]:
    """A shuffle (outside blosc) and the compressor, applied in order to a chunk's bytes."""
    family = codec.info.family
    if family == "none":
        return []
    zarr = module == "zarr.codecs"
    cls, zarr_name = FAMILIES[family].zarr if zarr else (FAMILIES[family].numcodecs, None)
    if family == "blosc":
        code, name = BLOSC_SHUFFLE[codec.shuffle]
        kwargs = {"cname": codec.info.blosc_cname, "clevel": codec.level}
        kwargs |= {"shuffle": name if zarr else code, "typesize": itemsize}
        return [Call(module, cls, kwargs, zarr_name)]
    shuffle, shuffle_name = ZARR_SHUFFLE if zarr else (ZARR_SHUFFLE[0], None)
    chain = [Call(module, shuffle, {"elementsize": itemsize}, shuffle_name)]
    chain = chain if codec.shuffle == "byte" else []
    return [*chain, Call(module, cls, {"level": codec.level}, zarr_name)]


def zarr_codecs(codec: Codec, *, itemsize: int) -> list[Call]:
    """The ``compressors`` (bytes-to-bytes codecs) of ``zarr.create_array``, as calls.

    Byte shuffle outside blosc is numcodecs' Shuffle ahead of the compressor,
    as HDF5's shuffle filter is ahead of deflate.
    """
    return _chunk_codecs(codec, itemsize, "zarr.codecs")


def zarr_compressors(codec: Codec, *, itemsize: int) -> list[Any] | None:
    """The ``compressors`` for ``zarr.create_array`` (``None`` for no compression)."""
    return [call.build() for call in zarr_codecs(codec, itemsize=itemsize)] or None


def numcodecs_pipeline(codec: Codec, *, itemsize: int) -> list[Any]:
    """numcodecs objects applied in order to a chunk's bytes (shuffle, then compressor)."""
    return [call.build() for call in _chunk_codecs(codec, itemsize, "numcodecs")]
