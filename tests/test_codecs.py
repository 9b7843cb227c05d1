"""The codec vocabulary, and that every backend and export spells a codec alike."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from iotune.core.errors import NotApplicable
from iotune.model import codecs
from iotune.model.codecs import (
    CODECS,
    SHUFFLES,
    Codec,
    netcdf4_encoding,
    netcdf4_expected_filters,
    parse_codec_name,
    parse_shuffle,
    resolve,
)
from iotune.model.spec import Workload

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


# --- Codec.from_params: one codec per trial, validated once -----------------


def test_from_params_reads_the_spec_keys():
    effective = {"chunks": "4x8x8", "codec": "zstd", "level": 3, "shuffle": "none"}
    assert Codec.from_params(effective) == Codec("zstd", 3, "none")
    assert Codec.from_params({"chunks": "auto"}) == Codec("none", None, "none")
    assert Codec.from_params({"codec": "zlib", "level": 4, "shuffle": True}).shuffle == "byte"


@pytest.mark.parametrize("level", [np.int64(4), 4.0], ids=repr)
def test_from_params_normalises_whole_levels_to_int(level):
    codec = Codec.from_params({"codec": "zlib", "level": level, "shuffle": "byte"})
    assert codec == Codec("zlib", 4, "byte")
    assert type(codec.level) is int


@pytest.mark.parametrize(
    ("params", "error", "parts"),
    [
        pytest.param(
            {"codec": "lzma"},
            ValueError,
            ["codec", "'lzma'", "allowed: none, zlib, bzip2, zstd, blosc-lz4"],
            id="codec-unknown",
        ),
        pytest.param({"codec": 3}, ValueError, ["codec", "3", "allowed: none"], id="codec-type"),
        pytest.param(
            {"codec": "zlib", "level": 12, "shuffle": "none"},
            NotApplicable,
            ["level 12", "'zlib'", "allowed 1..9"],
            id="level-range",
        ),
        pytest.param(
            {"codec": "zstd", "shuffle": "none"},
            NotApplicable,
            ["level None", "'zstd'", "allowed 1..22"],
            id="level-missing",
        ),
        pytest.param(
            {"codec": "zlib", "level": "4", "shuffle": "none"},
            ValueError,
            ["level '4'", "not an integer", "'zlib': 1..9"],
            id="level-str",
        ),
        pytest.param(
            {"codec": "zlib", "level": 4.5, "shuffle": "none"},
            ValueError,
            ["level 4.5", "not an integer", "1..9"],
            id="level-fraction",
        ),
        pytest.param(
            {"codec": "zlib", "level": True, "shuffle": "none"},
            ValueError,
            ["level True", "not an integer", "1..9"],
            id="level-bool",
        ),
        pytest.param(
            {"codec": "none", "level": 3, "shuffle": "none"},
            NotApplicable,
            ["level 3", "'none'", "allowed: None"],
            id="level-for-none",
        ),
        pytest.param(
            {"codec": "zlib", "level": 4, "shuffle": "nibble"},
            ValueError,
            ["shuffle", "'nibble'", "allowed: none, byte, bit"],
            id="shuffle-unknown",
        ),
        pytest.param(
            {"codec": "zstd", "level": 3, "shuffle": "bit"},
            NotApplicable,
            ["bit shuffle", "'zstd'", "allowed: none, byte"],
            id="shuffle-bit",
        ),
        pytest.param(
            {"codec": "none", "level": None, "shuffle": "byte"},
            NotApplicable,
            ["shuffle 'byte'", "'none'", "allowed: none"],
            id="shuffle-for-none",
        ),
    ],
)
def test_from_params_names_field_value_and_choices_in_one_line(params, error, parts):
    with pytest.raises(error) as info:
        Codec.from_params(params)
    message = str(info.value)
    assert "\n" not in message
    for part in parts:
        assert part in message, (part, message)


def test_from_dict_rejects_unknown_keys():
    with pytest.raises(
        ValueError, match="unknown codec key 'clevel'; allowed: name, level, shuffle"
    ):
        Codec.from_dict({"name": "zlib", "clevel": 4})


def _every_codec():
    for name, info in CODECS.items():
        for shuffle in SHUFFLES:
            try:
                codec = Codec(name, info.default_level, shuffle)
            except NotApplicable:
                continue
            yield pytest.param(codec, id=f"{name}-{shuffle}")


EVERY_CODEC = list(_every_codec())


def _params(codec: Codec) -> dict:
    return {"codec": codec.name, "level": codec.level, "shuffle": codec.shuffle}


@pytest.mark.parametrize("codec", EVERY_CODEC)
def test_every_codec_round_trips(codec):
    assert Codec.from_dict(codec.to_dict()) == codec
    assert Codec.from_params(_params(codec)) == codec
    assert codecs.resolve_params(_params(codec)) == (codec, [])


def test_every_codec_covers_the_vocabulary():
    assert {case.values[0].name for case in EVERY_CODEC} == set(CODECS)
    assert len(EVERY_CODEC) == 1 + 3 * 2 + 5 * 3  # none; byte/none shuffles; blosc: all three


# --- one codec, the same filters in every backend and export ----------------

W = Workload(("time", "lat", "lon"), (4, 16, 16))
CHUNKS = "4x16x16"  # one chunk: the whole array


def _data() -> np.ndarray:
    return (np.arange(4 * 16 * 16) % 97).astype("int16").reshape(W.shape)


def _target():
    from iotune.backends.exports_base import Target

    return Target("data", W.dims, W.shape, W.dtype)


def _write_with(backend, path, params):
    effective, _notes = backend.resolve(params, W)
    writer = backend.open_writer(path, W, effective)
    writer.write(0, _data())
    writer.close()
    return effective


@pytest.mark.parametrize("codec", EVERY_CODEC)
def test_zarr_export_builds_the_compressors_the_zarr_backend_stored(codec, tmp_path):
    import zarr

    from iotune.backends.zarr import exports as zarr_exports
    from iotune.backends.zarr.backend import ZarrBackend

    settings = {"backend": "zarr", "chunks": CHUNKS, "shards": "none", **_params(codec)}
    _write_with(ZarrBackend(), tmp_path / "z.zarr", settings)
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numcodecs codecs are outside the Zarr v3 spec
        exec(zarr_exports.zarr_encoding_code(settings, _target()), namespace)
        stored = zarr.open_array(tmp_path / "z.zarr", path="data", mode="r").compressors
        built = codecs.zarr_compressors(codec, itemsize=2) or []
    exported = namespace["encoding"]["data"]["compressors"]
    assert [c.to_dict() for c in exported] == [c.to_dict() for c in stored]
    assert list(exported) == built
    # the metadata export is those very codecs: their names and the arguments given
    metadata = zarr_exports.xarray_zarr_encoding(settings, _target())["data"]["compressors"]
    assert len(metadata) == len(stored)
    for meta, obj in zip(metadata, stored, strict=True):
        full = obj.to_dict()
        assert meta["name"] == full["name"]
        assert meta["configuration"].items() <= full["configuration"].items()


@pytest.mark.parametrize("codec", EVERY_CODEC)
def test_memory_backend_compresses_chunks_to_the_zarr_backends_bytes(codec, tmp_path):
    from iotune.backends.memory import backend as memory
    from iotune.backends.zarr.backend import ZarrBackend

    params = {"chunks": CHUNKS, **_params(codec)}
    backend = memory.MemoryBackend()
    backend.import_library()
    _write_with(backend, tmp_path / "m.mem", params)
    _write_with(ZarrBackend(), tmp_path / "z.zarr", params)
    in_memory = memory._STORE[str(tmp_path / "m.mem")][(0, 0, 0)]
    assert in_memory == (tmp_path / "z.zarr" / "data" / "c" / "0" / "0" / "0").read_bytes()
    backend.remove(tmp_path / "m.mem")


_H5PY_PIPELINES = """
import json, sys
import h5py
from iotune.backends.h5py.backend import H5pyBackend, create_dataset
from iotune.model.spec import Workload

H5pyBackend.prepare_process()
w = Workload(("time", "lat", "lon"), (4, 16, 16))
out = {}
with h5py.File("mem.h5", "w", driver="core", backing_store=False) as fh:
    for n, params in enumerate(json.loads(sys.argv[1])):
        plist = create_dataset(fh.create_group(str(n)), w, params).id.get_create_plist()
        out[n] = [plist.get_filter(i)[:3:2] for i in range(plist.get_nfilters())]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def h5py_pipelines():
    """What the h5py backend's ``create_dataset`` puts in a file, per codec.

    In a fresh interpreter: one that has written blosc with netCDF4 has that
    library's blosc filter loaded, and h5py's HDF5 then fails in its callback.
    """
    pytest.importorskip("h5py")
    settings = [{"chunks": CHUNKS, **_params(case.values[0])} for case in EVERY_CODEC]
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    done = subprocess.run(
        [sys.executable, "-c", _H5PY_PIPELINES, json.dumps(settings)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    pipelines = json.loads(done.stdout)
    return {case.id: pipelines[str(n)] for n, case in enumerate(EVERY_CODEC)}


@pytest.mark.parametrize("codec", EVERY_CODEC)
def test_h5py_backend_export_and_hdf5_tools_use_one_filter_pipeline(codec, h5py_pipelines):
    hdf5plugin = pytest.importorskip("hdf5plugin")
    from iotune.backends.h5py import exports as h5py_exports

    text = ", ".join(h5py_exports.h5py_filter_args(codec))
    assert eval(f"dict({text})", {"hdf5plugin": hdf5plugin}) == codecs.h5py_encoding(codec)
    got = h5py_pipelines[f"{codec.name}-{codec.shuffle}"]
    # what nccopy -F and h5repack -f are given
    asked = codecs.hdf5_filters(codec)
    assert [fid for fid, _values in got] == [fid for fid, _values in asked]
    for (fid, values), (_fid, want) in zip(got, asked, strict=True):
        if fid == codecs.HDF5_SHUFFLE_FILTER:
            continue  # HDF5 fills in the element size
        if fid == codecs.FAMILIES["blosc"].hdf5_filter:
            values, want = values[4:], want[4:]  # the filter fills in its four reserved values
        assert tuple(values) == want


@pytest.mark.parametrize(("name", "level", "shuffle"), CONTRACT_CASES)
def test_netcdf4_backend_and_export_write_the_same_filters(
    tmp_path, available_filters, name, level, shuffle
):
    import netCDF4

    from iotune.backends.netcdf4 import exports as netcdf4_exports
    from iotune.backends.netcdf4.backend import NetCDF4Backend

    codec = Codec(name, level, shuffle)
    if codec.info.family not in available_filters:
        pytest.skip(f"this netCDF4 build has no {codec.info.family} filter")
    settings = {"backend": "netcdf4", "chunks": CHUNKS, **_params(codec)}
    _write_with(NetCDF4Backend(), tmp_path / "backend.nc", settings)
    kwargs = netcdf4_exports.netcdf4_create_variable(settings, _target())
    assert {k: v for k, v in kwargs.items() if k != "chunksizes"} == netcdf4_encoding(codec)
    with netCDF4.Dataset(tmp_path / "export.nc", "w") as nc:
        for dim, size in zip(W.dims, W.shape, strict=True):
            nc.createDimension(dim, size)
        nc.createVariable("data", W.dtype, W.dims, **kwargs)[:] = _data()
    filters = []
    for path in ("backend.nc", "export.nc"):
        with netCDF4.Dataset(tmp_path / path) as nc:
            filters.append(nc.variables["data"].filters())
    assert filters[0] == filters[1]


def _every_codec() -> list[Codec]:
    from iotune.model.codecs import CODECS

    found = [Codec("none")]
    for name, info in CODECS.items():
        shuffles = ("none", "byte", "bit") if info.family == "blosc" else ("none", "byte")
        found += [Codec(name, info.default_level, s) for s in shuffles if info.family != "none"]
    return found


@pytest.mark.parametrize("codec", _every_codec(), ids=lambda c: f"{c.name}-{c.shuffle}")
def test_what_a_library_reports_reads_back_as_the_codec_written(codec: Codec) -> None:
    """The reverse lookup: zarr's codec objects and netCDF4's filters() name the codec."""
    from iotune.model.codec_names import codec_of_encoding, codec_text
    from iotune.model.codecs import netcdf4_expected_filters, zarr_compressors

    stored = {"compressors": zarr_compressors(codec, itemsize=4) or ()}
    assert codec_of_encoding(stored) == codec
    if codec.info.family not in ("bzip2", "zstd") or codec.shuffle == "none":
        assert codec_of_encoding(netcdf4_expected_filters(codec)) == codec
    shown = codec_text(codec)
    assert shown == "none" or shown.startswith(f"{codec.name} {codec.level}")


def test_a_compressor_iotune_does_not_name_is_refused_by_name() -> None:
    from iotune.model.codec_names import codec_of_encoding

    with pytest.raises(NotApplicable, match="'lzf' is not a codec iotune names"):
        codec_of_encoding({"compression": "lzf"})
