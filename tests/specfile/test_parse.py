"""Spec version 1: parsing, defaults, validation and the digest."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from iotune.core.errors import SpecError, UsageError
from iotune.model.spec import MeasureSpec, Parameter, ReadSpec, Sweep
from iotune.specfile.parse import load_spec, load_spec_text, parse_spec

SHAPE = {"time": 16, "y": 32, "x": 32}
#: a value for ``changed_spec`` that deletes the key instead of setting it
DELETE = ...


def make(**sections: Any) -> Sweep:
    """A spec with a (time, y, x) = (16, 32, 32) workload and the given sections."""
    data = {"version": 1, "workload": {"shape": dict(SHAPE)}, **sections}
    return parse_spec(data)


def param(sweep: Sweep, name: str) -> Parameter:
    return next(p for p in sweep.parameters if p.name == name)


# --- defaults and structure -------------------------------------------------


def test_defaults():
    sweep = parse_spec({"version": 1, "workload": {"shape": {"time": 4, "x": 8}}})
    assert sweep.name == "sweep"
    assert sweep.description == ""
    assert sweep.backends == ("netcdf4",)
    assert sweep.parameters == ()
    assert sweep.swept == ()
    assert sweep.workload.dims == ("time", "x")
    assert sweep.workload.shape == (4, 8)
    assert (sweep.workload.dtype, sweep.workload.field, sweep.workload.seed) == (
        "int16",
        "smooth",
        0,
    )
    assert sweep.measure == MeasureSpec(repeats=3, cache="cold", fsync=True)
    assert sweep.measure.repeats == 3
    assert sweep.measure.cache == "cold"
    assert sweep.measure.fsync is True
    assert sweep.measure.max_cold_residency == 0.05
    assert sweep.read == ReadSpec(patterns=("full",), spatial=(), timeseries_pixels=16)
    assert sweep.execution.executor == "serial"


def test_minimal_fixture(tmp_path, minimal_path):
    sweep = load_spec(minimal_path)
    assert sweep.name == "minimal"
    assert sweep.source == str(minimal_path)
    assert sweep.text == minimal_path.read_text()
    assert sweep.workload.shape == (16, 32, 32)
    assert [p.name for p in sweep.swept] == ["chunks", "codec"]
    assert sweep.read.patterns == ("full", "spatial")
    assert sweep.read.spatial == (("time", 2), ("y", 16), ("x", 16))
    assert sweep.measure.repeats == 1


def test_name_defaults_to_file_stem(tmp_path):
    path = tmp_path / "my-sweep.yaml"
    path.write_text("version: 1\nworkload: {shape: {time: 4, x: 8}}\n")
    assert load_spec(path).name == "my-sweep"


def test_load_spec_text_equals_parse_spec(minimal_path):
    text = minimal_path.read_text()
    assert load_spec_text(text) == parse_spec(yaml.safe_load(text))


def test_text_and_source_do_not_affect_equality(minimal_spec):
    data = minimal_spec()
    assert parse_spec(data, text="a", source="a.yaml") == parse_spec(data, text="b")


@pytest.mark.parametrize(
    ("dtype", "itemsize"),
    [("int16", 2), ("uint16", 2), ("int32", 4), ("float32", 4), ("float64", 8)],
)
def test_workload_nbytes(dtype, itemsize):
    sweep = make(workload={"shape": dict(SHAPE), "dtype": dtype})
    assert sweep.workload.itemsize == itemsize
    assert sweep.workload.nbytes == itemsize * 16 * 32 * 32


@pytest.mark.parametrize(
    ("target", "attribute"),
    [
        pytest.param(lambda s: s, "name", id="sweep"),
        pytest.param(lambda s: s.workload, "shape", id="workload"),
        pytest.param(lambda s: s.parameters[0], "values", id="parameter"),
        pytest.param(lambda s: s.read, "patterns", id="read"),
        pytest.param(lambda s: s.measure, "repeats", id="measure"),
        pytest.param(lambda s: s.execution, "executor", id="execution"),
    ],
)
def test_frozen(target, attribute, minimal_path):
    obj = target(load_spec(minimal_path))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(obj, attribute, None)


def test_collections_are_tuples(minimal_path):
    sweep = load_spec(minimal_path)
    assert isinstance(sweep.parameters, tuple)
    assert all(isinstance(p.values, tuple) for p in sweep.parameters)
    assert isinstance(sweep.workload.shape, tuple)
    assert isinstance(sweep.read.patterns, tuple)


# --- swept or fixed ---------------------------------------------------------


def test_list_is_swept_scalar_is_fixed():
    sweep = make(parameters={"codec": ["none", "zlib"], "level": 4, "shuffle": ["byte"]})
    assert param(sweep, "codec") == Parameter("codec", ("none", "zlib"), swept=True)
    assert param(sweep, "level") == Parameter("level", (4,), swept=False)
    # a one-element list is still a (one-point) sweep dimension
    assert param(sweep, "shuffle") == Parameter("shuffle", ("byte",), swept=True)
    assert [p.name for p in sweep.swept] == ["codec", "shuffle"]


def test_parameters_keep_spec_order():
    sweep = make(parameters={"chunk_cache": "1MiB", "codec": "zlib", "chunks": "auto"})
    assert [p.name for p in sweep.parameters] == ["chunk_cache", "codec", "chunks"]


def test_list_of_ints_is_one_fixed_chunk_shape():
    chunks = param(make(parameters={"chunks": [8, 16, 16]}), "chunks")
    assert chunks == Parameter("chunks", ((8, 16, 16),), swept=False)
    assert chunks.labels() == ("8x16x16",)


def test_list_of_shapes_is_swept():
    chunks = param(make(parameters={"chunks": [[8, 16, 16], "contiguous"]}), "chunks")
    assert chunks == Parameter("chunks", ((8, 16, 16), "contiguous"), swept=True)
    assert chunks.labels() == ("8x16x16", "contiguous")


@pytest.mark.parametrize("layout", ["auto", "contiguous"])
def test_chunks_keyword(layout):
    assert param(make(parameters={"chunks": layout}), "chunks").values == (layout,)


def test_chunks_mapping_fills_other_dims_with_full_size():
    assert param(make(parameters={"chunks": {"time": 8}}), "chunks").values == ((8, 32, 32),)
    swept = param(make(parameters={"chunks": [{"time": 1}, {"y": 8, "x": 4}]}), "chunks")
    assert swept.values == ((1, 32, 32), (16, 8, 4))
    assert swept.swept


def test_chunks_full_size_is_allowed():
    assert param(make(parameters={"chunks": [16, 32, 32]}), "chunks").values == ((16, 32, 32),)


def test_chunk_cache_sizes():
    sweep = make(parameters={"chunk_cache": "64MiB"})
    assert param(sweep, "chunk_cache").values == (67108864,)
    swept = param(make(parameters={"chunk_cache": ["1MiB", 4096, "8MB"]}), "chunk_cache")
    assert swept.values == (1048576, 4096, 8_000_000)


@pytest.mark.parametrize(
    ("yaml_value", "expected", "swept"),
    [
        pytest.param("[true, false]", ("byte", "none"), True, id="list-of-bools"),
        pytest.param("yes", ("byte",), False, id="yes"),
        pytest.param("false", ("none",), False, id="false"),
        pytest.param("[none, byte]", ("none", "byte"), True, id="names"),
    ],
)
def test_shuffle_yaml_booleans(yaml_value, expected, swept):
    text = (
        "version: 1\nworkload: {shape: {time: 4, x: 8}}\n"
        f"parameters:\n  codec: zlib\n  shuffle: {yaml_value}\n"
    )
    shuffle = param(load_spec_text(text), "shuffle")
    assert shuffle.values == expected
    assert shuffle.swept is swept


# --- levels against the listed codecs ---------------------------------------


def test_level_allowed_by_one_listed_codec():
    sweep = make(parameters={"codec": ["zlib", "zstd"], "level": 15})
    assert param(sweep, "level").values == (15,)


def test_level_out_of_range_for_every_listed_codec():
    with pytest.raises(SpecError) as info:
        make(parameters={"codec": "zlib", "level": 15})
    assert info.value.field == "parameters.level"
    assert "15" in info.value.message
    assert "zlib: 1..9" in info.value.message


def test_swept_level_checked_value_by_value():
    with pytest.raises(SpecError, match=r"parameters\.level: 12 is out of range.*bzip2: 1\.\.9"):
        make(parameters={"codec": ["zlib", "bzip2"], "level": [1, 9, 12]})


def test_level_beyond_any_codec():
    with pytest.raises(SpecError) as info:
        make(parameters={"codec": "zstd", "level": 23})
    assert info.value.field == "parameters.level"
    assert "<= 22" in info.value.message


def test_level_without_compressing_codec_is_not_range_checked():
    # level only matters for compressors; 'none' makes it not applicable in the plan
    assert param(make(parameters={"codec": "none", "level": 0}), "level").values == (0,)
    assert param(make(parameters={"level": [0, 3]}), "level").values == (0, 3)


# --- digest -----------------------------------------------------------------


def test_digest_is_stable(minimal_path):
    one, two = load_spec(minimal_path).digest(), load_spec(minimal_path).digest()
    assert one == two
    assert len(one) == 16
    int(one, 16)


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"name": "renamed"}, id="name"),
        pytest.param({"description": "another description"}, id="description"),
    ],
)
def test_digest_ignores_labels(changes, minimal_path, changed_spec):
    assert parse_spec(changed_spec(changes)).digest() == load_spec(minimal_path).digest()


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"parameters.level": 5}, id="level"),
        pytest.param({"parameters.codec": ["none", "zstd"]}, id="codec"),
        pytest.param({"parameters.chunks": [[8, 16, 16], "auto"]}, id="chunks"),
        pytest.param({"parameters.chunk_cache": "2MiB"}, id="chunk-cache"),
        pytest.param({"parameters.level": [4]}, id="fixed-to-swept"),
        pytest.param({"workload.seed": 1}, id="seed"),
        pytest.param({"workload.dtype": "float32"}, id="dtype"),
        pytest.param({"read.patterns": ["full"]}, id="patterns"),
        pytest.param({"measure.repeats": 2}, id="repeats"),
    ],
)
def test_digest_changes_with_what_is_measured(changes, minimal_path, changed_spec):
    assert parse_spec(changed_spec(changes)).digest() != load_spec(minimal_path).digest()


# --- errors -----------------------------------------------------------------


def test_spec_error_is_a_value_error_with_field(changed_spec):
    assert issubclass(SpecError, ValueError)
    assert issubclass(SpecError, UsageError)
    with pytest.raises(ValueError) as info:
        parse_spec(changed_spec({"parameters.codec": ["none", "lzma"]}))
    err = info.value
    assert isinstance(err, SpecError)
    assert err.field == "parameters.codec[1]"
    assert "'lzma'" in err.message
    assert err.source is None
    assert str(err) == f"parameters.codec[1]: {err.message}"


def test_spec_error_names_the_file(tmp_path, changed_spec):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(changed_spec({"measure.cache": "hot"})))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.source == str(path)
    assert info.value.field == "measure.cache"
    assert str(info.value).startswith(f"{path}: measure.cache: ")


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(SpecError, match="cannot read spec: No such file") as info:
        load_spec(path)
    assert info.value.source == str(path)


def test_malformed_yaml_names_the_line():
    with pytest.raises(SpecError) as info:
        load_spec_text("version: 1\nname: a: b\nworkload: {}\n", source="s.yaml")
    assert str(info.value) == (
        "s.yaml: malformed YAML at line 2, column 8: mapping values are not allowed here"
    )
    assert info.value.source == "s.yaml"


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        pytest.param({"paramters": {}}, "paramters", ("unknown key",), id="unknown-key"),
        pytest.param({"measure.repeet": 3}, "measure.repeet", ("repeats",), id="nested-key"),
        pytest.param(
            {"parameters.stripe_count": 4}, "parameters.stripe_count", ("chunks",), id="param"
        ),
        pytest.param(
            {"parameters.codec": ["zlib", "lzma"]}, "parameters.codec[1]", ("'lzma'",), id="codec"
        ),
        pytest.param({"parameters.chunks": [8, 16]}, "parameters.chunks", ("rank",), id="rank"),
        pytest.param(
            {"parameters.chunks": [[32, 16, 16]]},
            "parameters.chunks[0]",
            ("larger", "'time'"),
            id="chunk-too-large",
        ),
        pytest.param(
            {"parameters.chunks": {"time": 17}},
            "parameters.chunks",
            ("larger",),
            id="mapping-too-large",
        ),
        pytest.param(
            {"parameters.chunks": [[0, 16, 16], "auto"]},
            "parameters.chunks[0][0]",
            (">= 1",),
            id="chunk-zero",
        ),
        pytest.param(
            {"parameters.chunks": {"z": 4}}, "parameters.chunks.z", ("time",), id="chunk-dim"
        ),
        pytest.param(
            {"parameters.chunks": "8x16x16"}, "parameters.chunks", ("'8x16x16'",), id="chunk-str"
        ),
        pytest.param(
            {"parameters.chunk_cache": "-1MiB"},
            "parameters.chunk_cache",
            ("negative",),
            id="negative-size",
        ),
        pytest.param(
            {"parameters.chunk_cache": ["1MiB", "12XB"]},
            "parameters.chunk_cache[1]",
            ("'12XB'",),
            id="malformed-size",
        ),
        pytest.param({"parameters.codec": []}, "parameters.codec", ("empty",), id="empty-list"),
        pytest.param(
            {"parameters.codec": ["zlib", "none", "zlib"]},
            "parameters.codec",
            ("twice",),
            id="duplicate",
        ),
        pytest.param(
            {"parameters.chunks": [{"time": 8}, [8, 32, 32]]},
            "parameters.chunks",
            ("twice",),
            id="duplicate-after-normalising",
        ),
        pytest.param({"measure.repeats": "3"}, "measure.repeats", ("integer",), id="wrong-type"),
        pytest.param({"measure.repeats": True}, "measure.repeats", ("integer",), id="bool-int"),
        pytest.param({"measure.repeats": 0}, "measure.repeats", (">= 1",), id="repeats-zero"),
        pytest.param({"measure.fsync": "yes please"}, "measure.fsync", ("true",), id="fsync"),
        pytest.param({"measure.cache": "hot"}, "measure.cache", ("warm",), id="cache"),
        pytest.param(
            {"measure.max_cold_residency": 2}, "measure.max_cold_residency", ("2",), id="residency"
        ),
        pytest.param({"parameters.level": 30}, "parameters.level", ("<= 22",), id="level"),
        pytest.param({"parameters.level": -1}, "parameters.level", (">= 0",), id="level-neg"),
        pytest.param(
            {"parameters.shuffle": "nibble"}, "parameters.shuffle", ("byte",), id="shuffle"
        ),
        pytest.param(
            {"read.patterns": ["full", "diagonal"]},
            "read.patterns[1]",
            ("'diagonal'",),
            id="pattern",
        ),
        pytest.param({"read.patterns": []}, "read.patterns", ("non-empty",), id="no-patterns"),
        pytest.param({"read.spatial": {"y": 33}}, "read.spatial.y", ("1..32",), id="spatial"),
        pytest.param({"read.spatial": {"y": 1.5}}, "read.spatial.y", ("(0, 1]",), id="fraction"),
        pytest.param({"read.spatial": {"z": 4}}, "read.spatial.z", ("time",), id="spatial-dim"),
        pytest.param(
            {"read.timeseries": {"pixels": 0}}, "read.timeseries.pixels", (">= 1",), id="pixels"
        ),
        pytest.param({"workload": DELETE}, "workload", ("required",), id="no-workload"),
        pytest.param({"workload.shape": DELETE}, "workload.shape", ("required",), id="no-shape"),
        pytest.param(
            {"workload.shape": {"time": 16}}, "workload.shape", ("rank 1",), id="rank-1-data"
        ),
        pytest.param(
            {"workload.shape": {"time": -16, "y": 32, "x": 32}},
            "workload.shape.time",
            ("-16",),
            id="negative-shape",
        ),
        pytest.param({"workload.dtype": "complex64"}, "workload.dtype", ("float32",), id="dtype"),
        pytest.param({"workload.field": "noise"}, "workload.field", ("random",), id="field"),
        pytest.param({"workload.seed": -1}, "workload.seed", (">= 0",), id="seed"),
        pytest.param({"version": 2}, "version", ("allowed: 1",), id="version"),
        pytest.param({"version": DELETE}, "version", ("required",), id="no-version"),
        pytest.param({"backend": "hdf4"}, "backend", ("netcdf4",), id="backend"),
        pytest.param({"backend": []}, "backend", ("empty",), id="no-backend"),
        pytest.param({"name": ""}, "name", ("non-empty",), id="name"),
        pytest.param({"description": 3}, "description", ("string",), id="description"),
        pytest.param(
            {"execution": {"executor": "ray"}}, "execution.executor", ("serial",), id="executor"
        ),
    ],
)
def test_broken_spec_names_the_field(changes, field, words, changed_spec):
    with pytest.raises(SpecError) as info:
        parse_spec(changed_spec(changes))
    assert info.value.field == field
    for word in words:
        assert word in info.value.message


@pytest.mark.parametrize(
    "data",
    [None, [], ["version", 1], "version 1", 1],
    ids=["empty", "empty-list", "list", "string", "number"],
)
def test_top_level_not_a_mapping(data):
    with pytest.raises(SpecError):
        parse_spec(data)


# --- once bugs, now fixed --------------------------------------------------


def test_workload_shape_scalar_is_a_spec_error(changed_spec):
    with pytest.raises(SpecError) as info:
        parse_spec(changed_spec({"workload.shape": 64}))
    assert info.value.field == "workload.shape"


def test_duplicate_read_pattern_is_rejected(changed_spec):
    with pytest.raises(SpecError) as info:
        parse_spec(changed_spec({"read.patterns": ["full", "full"]}))
    assert info.value.field == "read.patterns"


def test_duplicate_backend_is_rejected(changed_spec):
    with pytest.raises(SpecError) as info:
        parse_spec(changed_spec({"backend": ["netcdf4", "netcdf4"]}))
    assert info.value.field == "backend"


def test_version_true_is_rejected(changed_spec):
    with pytest.raises(SpecError) as info:
        parse_spec(changed_spec({"version": True}))
    assert info.value.field == "version"


def test_non_utf8_file_is_a_spec_error(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"version: 1\nname: caf\xe9\n")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert "utf-8" in str(info.value).lower()
