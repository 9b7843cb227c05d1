"""The codec vocabulary and its mapping onto netCDF4-python."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from iotune.codecs import (
    CODECS,
    SHUFFLES,
    Codec,
    netcdf4_encoding,
    netcdf4_expected_filters,
    parse_codec_name,
    parse_shuffle,
    resolve,
)
from iotune.errors import NotApplicable

# --- vocabulary ---------------------------------------------------------------


def test_vocabulary_levels():
    assert CODECS["none"].family == "none"
    assert (CODECS["zlib"].min_level, CODECS["zlib"].max_level) == (1, 9)
    assert (CODECS["zstd"].min_level, CODECS["zstd"].max_level) == (1, 22)
    assert CODECS["blosc-lz4"].level_range() == "1..9"
    assert {i.family for i in CODECS.values()} == {"none", "zlib", "bzip2", "zstd", "blosc"}


def test_parse_codec_name():
    assert parse_codec_name("zstd") == "zstd"
    with pytest.raises(ValueError, match=r"unknown codec 'lzma'; allowed: none, zlib"):
        parse_codec_name("lzma")
    with pytest.raises(ValueError, match="unknown codec 3"):
        parse_codec_name(3)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, "byte"), (False, "none"), ("none", "none"), ("byte", "byte"), ("bit", "bit")],
    ids=["yaml-true", "yaml-false", "none", "byte", "bit"],
)
def test_parse_shuffle(value, expected):
    assert parse_shuffle(value) == expected


@pytest.mark.parametrize("value", ["nibble", "Byte", 1, None], ids=repr)
def test_parse_shuffle_rejects(value):
    with pytest.raises(ValueError, match="allowed: none, byte, bit"):
        parse_shuffle(value)


# --- Codec ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "level"),
    [
        ("zlib", 0),
        ("zlib", 10),
        ("zlib", None),
        ("bzip2", 10),
        ("zstd", 23),
        ("blosc-lz4", 0),
        ("blosc-zstd", 10),
    ],
    ids=lambda v: str(v),
)
def test_codec_rejects_out_of_range_level(name, level):
    with pytest.raises(NotApplicable) as info:
        Codec(name, level, "none")
    message = str(info.value)
    assert f"level {level}" in message
    assert name in message
    assert CODECS[name].level_range() in message


@pytest.mark.parametrize(("name", "level"), [("zlib", 1), ("zlib", 9), ("zstd", 22), ("bzip2", 9)])
def test_codec_accepts_levels_in_range(name, level):
    assert Codec(name, level).level == level


@pytest.mark.parametrize("name", ["zlib", "bzip2", "zstd"])
def test_bit_shuffle_only_with_blosc(name):
    with pytest.raises(NotApplicable, match=f"bit shuffle .*blosc.*'{name}'"):
        Codec(name, 4, "bit")


@pytest.mark.parametrize("name", [n for n, i in CODECS.items() if i.family == "blosc"])
def test_bit_shuffle_with_blosc(name):
    assert Codec(name, 4, "bit").shuffle == "bit"


def test_codec_rejects_unknown_name_and_shuffle():
    with pytest.raises(ValueError, match="unknown codec 'lzma'"):
        Codec("lzma", 4)
    with pytest.raises(ValueError, match="unknown shuffle 'nibble'"):
        Codec("zlib", 4, "nibble")


def test_codec_is_frozen():
    codec = Codec("zlib", 4, "byte")
    with pytest.raises(dataclasses.FrozenInstanceError):
        codec.level = 5  # type: ignore[misc]


# --- resolve ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(("zlib", None, None), Codec("zlib", 4, "byte"), id="zlib-defaults"),
        pytest.param(("bzip2", None, None), Codec("bzip2", 4, "none"), id="bzip2-defaults"),
        pytest.param(("zstd", None, None), Codec("zstd", 4, "none"), id="zstd-defaults"),
        pytest.param(("blosc-lz4", None, None), Codec("blosc-lz4", 4, "byte"), id="blosc-defaults"),
        pytest.param(("zlib", 9, "none"), Codec("zlib", 9, "none"), id="zlib-explicit"),
        pytest.param(("zstd", 19, None), Codec("zstd", 19, "none"), id="zstd-level"),
        pytest.param(("none", None, None), Codec("none", None, "none"), id="none"),
    ],
)
def test_resolve_defaults(args, expected):
    codec, notes = resolve(*args)
    assert codec == expected
    assert notes == []


def test_resolve_none_drops_level_with_a_note():
    codec, notes = resolve("none", 5, None)
    assert codec == Codec("none", None, "none")
    assert codec.level is None
    assert notes == ["level does not apply to codec 'none'"]


def test_resolve_none_drops_shuffle_with_a_note():
    codec, notes = resolve("none", None, "byte")
    assert codec.shuffle == "none"
    assert notes == ["shuffle does not apply to codec 'none'"]


def test_resolve_none_with_explicit_none_shuffle_has_no_note():
    assert resolve("none", None, "none")[1] == []


@pytest.mark.parametrize(
    "args", [("zlib", 12, None), ("zstd", 4, "bit"), ("bzip2", 0, "none")], ids=str
)
def test_resolve_impossible_raises_not_applicable(args):
    with pytest.raises(NotApplicable):
        resolve(*args)


# --- netCDF4 keywords -------------------------------------------------------


@pytest.mark.parametrize(
    ("codec", "expected"),
    [
        pytest.param(Codec("none"), {"compression": None, "shuffle": False}, id="none"),
        pytest.param(
            Codec("zlib", 4, "byte"),
            {"compression": "zlib", "complevel": 4, "shuffle": True},
            id="zlib-byte",
        ),
        pytest.param(
            Codec("zlib", 1, "none"),
            {"compression": "zlib", "complevel": 1, "shuffle": False},
            id="zlib-noshuffle",
        ),
        pytest.param(
            Codec("bzip2", 9, "none"),
            {"compression": "bzip2", "complevel": 9, "shuffle": False},
            id="bzip2",
        ),
        pytest.param(
            Codec("zstd", 19, "none"),
            {"compression": "zstd", "complevel": 19, "shuffle": False},
            id="zstd",
        ),
        pytest.param(
            Codec("blosc-lz4", 5, "bit"),
            {"compression": "blosc_lz4", "complevel": 5, "blosc_shuffle": 2, "shuffle": False},
            id="blosc-lz4-bit",
        ),
        pytest.param(
            Codec("blosc-zstd", 3, "byte"),
            {"compression": "blosc_zstd", "complevel": 3, "blosc_shuffle": 1, "shuffle": False},
            id="blosc-zstd-byte",
        ),
        pytest.param(
            Codec("blosc-lz4hc", 9, "none"),
            {"compression": "blosc_lz4hc", "complevel": 9, "blosc_shuffle": 0, "shuffle": False},
            id="blosc-lz4hc-none",
        ),
        pytest.param(
            Codec("blosc-zlib", 1, "byte"),
            {"compression": "blosc_zlib", "complevel": 1, "blosc_shuffle": 1, "shuffle": False},
            id="blosc-zlib-byte",
        ),
        pytest.param(
            Codec("blosc-blosclz", 4, "byte"),
            {"compression": "blosc_lz", "complevel": 4, "blosc_shuffle": 1, "shuffle": False},
            id="blosc-blosclz",
        ),
    ],
)
def test_netcdf4_encoding(codec, expected):
    assert netcdf4_encoding(codec) == expected


@pytest.mark.parametrize("name", ["bzip2", "zstd"])
def test_netcdf4_shuffle_only_with_zlib(name):
    with pytest.raises(NotApplicable, match=f"netCDF4-python .*zlib.*'{name}'"):
        netcdf4_encoding(Codec(name, 4, "byte"))


def test_netcdf4_expected_filters_shapes():
    assert netcdf4_expected_filters(Codec("none")) == {
        "zlib": False,
        "zstd": False,
        "bzip2": False,
        "blosc": False,
        "shuffle": False,
    }
    assert netcdf4_expected_filters(Codec("zlib", 6, "byte")) == {
        "zlib": True,
        "zstd": False,
        "bzip2": False,
        "blosc": False,
        "shuffle": True,
        "complevel": 6,
    }
    assert netcdf4_expected_filters(Codec("blosc-lz4", 2, "bit"))["blosc"] == {
        "compressor": "blosc_lz4",
        "shuffle": 2,
    }


@pytest.mark.parametrize(
    "codec",
    [
        Codec("none"),
        Codec("zlib", 4, "byte"),
        Codec("zlib", 9, "none"),
        Codec("bzip2", 1, "none"),
        Codec("zstd", 22, "none"),
        Codec("blosc-lz4", 5, "bit"),
        Codec("blosc-blosclz", 1, "none"),
    ],
    ids=lambda c: f"{c.name}-{c.level}-{c.shuffle}",
)
def test_to_dict_from_dict_round_trip(codec):
    data = codec.to_dict()
    assert data == {"name": codec.name, "level": codec.level, "shuffle": codec.shuffle}
    assert Codec.from_dict(data) == codec


def test_from_dict_defaults():
    assert Codec.from_dict({"name": "none"}) == Codec("none", None, "none")
    assert Codec.from_dict({"name": "zstd", "level": 3}).shuffle == "none"


# --- the netCDF4 filter contract, checked against the real library ---------


def _cases():
    """Every codec of the vocabulary with every shuffle netCDF4 can express."""
    for name, info in CODECS.items():
        for shuffle in SHUFFLES:
            level = info.default_level
            try:
                netcdf4_encoding(Codec(name, level, shuffle))
            except NotApplicable:
                continue
            yield pytest.param(name, level, shuffle, id=f"{name}-{shuffle}")


CONTRACT_CASES = list(_cases())


def test_contract_covers_the_whole_vocabulary():
    covered = {case.values[0] for case in CONTRACT_CASES}
    assert covered == set(CODECS)


@pytest.fixture(scope="module")
def available_filters(tmp_path_factory):
    netCDF4 = pytest.importorskip("netCDF4")
    path = tmp_path_factory.mktemp("nc") / "probe.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        found = {"none", "zlib"}
        if ds.has_zstd_filter():
            found.add("zstd")
        if ds.has_bzip2_filter():
            found.add("bzip2")
        if ds.has_blosc_filter():
            found.add("blosc")
    return found


def _write(path, codec):
    import netCDF4

    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", 8)
        ds.createDimension("x", 64)
        var = ds.createVariable(
            "data", "i2", ("time", "x"), chunksizes=(4, 64), **netcdf4_encoding(codec)
        )
        var[:] = np.zeros((8, 64), dtype="i2")
    with netCDF4.Dataset(path, "r") as ds:
        return ds.variables["data"].filters()


@pytest.mark.parametrize(("name", "level", "shuffle"), CONTRACT_CASES)
def test_netcdf4_filters_match_expected(tmp_path, available_filters, name, level, shuffle):
    codec = Codec(name, level, shuffle)
    if codec.info.family not in available_filters:
        pytest.skip(f"this netCDF4 build has no {codec.info.family} filter")
    filters = _write(tmp_path / "codec.nc", codec)
    expected = netcdf4_expected_filters(codec)
    assert {key: filters.get(key) for key in expected} == expected


def test_netcdf4_expected_filters_detect_a_missing_shuffle(tmp_path):
    """The contract is strict enough for verification to catch a wrong file."""
    filters = _write(tmp_path / "plain.nc", Codec("zlib", 4, "none"))
    asked = netcdf4_expected_filters(Codec("zlib", 4, "byte"))
    wrong = {k for k, v in asked.items() if filters.get(k) != v}
    assert wrong == {"shuffle"}
    other_level = netcdf4_expected_filters(Codec("zlib", 5, "none"))
    assert {k for k, v in other_level.items() if filters.get(k) != v} == {"complevel"}
