"""``read.patterns`` entries that call the user's code: found, never run, in the digest."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from iotune.core.errors import SpecError
from iotune.model.userpatterns import UserPattern
from iotune.specfile.parse import load_spec

MODULE = """
import pathlib
pathlib.Path(__file__).with_name("ran").write_text("the module's top level ran")

def monthly_mean(ds):
    return ds["data"].mean()

try:
    from fast import helper
except ImportError:
    def helper(ds):
        return 0
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "myanalysis.py").write_text(MODULE)
    (tmp_path / "analysis.py").write_text("def run(ds):\n    return 1\n")
    return tmp_path


def spec(folder: Path, *patterns: object) -> Path:
    data = {
        "version": 1,
        "workload": {"shape": {"time": 8, "y": 4, "x": 4}},
        "read": {"patterns": list(patterns)},
    }
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_call_and_script_entries_are_patterns_beside_the_built_ins(folder: Path) -> None:
    sweep = load_spec(
        spec(
            folder,
            "full",
            {"name": "climatology", "call": "myanalysis:monthly_mean"},
            {"name": "trend", "script": "analysis.py", "function": "run"},
            {"name": "fallback", "call": "myanalysis:helper"},
        )
    )
    assert sweep.read.patterns == ("full", "climatology", "trend", "fallback")
    assert [u.name for u in sweep.read.user] == ["climatology", "trend", "fallback"]
    trend = sweep.read.user_pattern("trend")
    assert trend is not None and trend.script_path == folder.resolve() / "analysis.py"
    assert sweep.read.user_pattern("full") is None
    assert not (folder / "ran").exists(), "validating a spec must not run the user's module"


def test_module_found_from_the_spec_directory_not_the_working_one(
    folder: Path, tmp_path_factory, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    sweep = load_spec(spec(folder, {"name": "c", "call": "myanalysis:monthly_mean"}))
    assert sweep.read.user[0].base == str(folder.resolve())


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"name": "c", "call": "nomodule:f"}, ["read.patterns[1].call", "no module 'nomodule'"]),
        (
            {"name": "c", "call": "myanalysis:nothing"},
            ["read.patterns[1].call", "defines no top-level 'nothing'", "monthly_mean"],
        ),
        ({"name": "c", "script": "gone.py", "function": "run"}, ["[1].script", "no such file"]),
        ({"name": "c", "script": "analysis.py", "function": "walk"}, ["no top-level 'walk'"]),
        ({"name": "c", "script": "analysis.py"}, ["[1].function", "needs a function"]),
        ({"name": "c", "call": "not a call"}, ["[1].call", "is not 'module:function'"]),
        ({"name": "full", "call": "myanalysis:monthly_mean"}, ["[1].name", "'full' is taken"]),
        ({"name": "9lives", "call": "myanalysis:monthly_mean"}, ["[1].name", "identifier"]),
        ({"name": "c", "call": "a:b", "script": "analysis.py"}, ["exactly one of call"]),
        ({"name": "c", "call": "myanalysis:monthly_mean", "typo": 1}, ["[1].typo", "unknown key"]),
    ],
)
def test_bad_entries_are_one_line_naming_the_field(
    folder: Path, entry: dict, words: list[str]
) -> None:
    with pytest.raises(SpecError) as info:
        load_spec(spec(folder, "full", entry))
    message = str(info.value)
    assert len(message.splitlines()) == 1
    for word in words:
        assert word in message


def test_a_format_xarray_cannot_open_is_refused(folder: Path) -> None:
    path = spec(folder, "full", {"name": "c", "call": "myanalysis:monthly_mean"})
    data = yaml.safe_load(path.read_text()) | {"backend": ["netcdf4", "posix"]}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SpecError, match=r"read.patterns\[1\]: backend posix cannot be opened"):
        load_spec(path)


def test_a_name_used_twice_is_refused(folder: Path) -> None:
    entry = {"name": "c", "call": "myanalysis:monthly_mean"}
    with pytest.raises(SpecError, match=r"read.patterns\[1\].name: 'c' is taken"):
        load_spec(spec(folder, entry, entry))


def test_a_syntax_error_is_named_with_its_line(folder: Path) -> None:
    (folder / "broken.py").write_text("def run(ds):\n    return (\n")
    with pytest.raises(SpecError, match=r"broken.py line \d+"):
        load_spec(spec(folder, {"name": "c", "script": "broken.py", "function": "run"}))


def test_the_digest_changes_with_an_entry_and_not_without_one(folder: Path) -> None:
    one = load_spec(spec(folder, "full", {"name": "c", "call": "myanalysis:monthly_mean"}))
    two = load_spec(spec(folder, "full", {"name": "c", "call": "myanalysis:helper"}))
    plain = load_spec(spec(folder, "full"))
    assert one.digest() != two.digest() != plain.digest()
    # a sweep without user patterns keeps the digest earlier releases gave it
    assert "user" not in repr(plain.read)


def test_entries_round_trip() -> None:
    call = UserPattern("c", call="m.sub:f", base="/somewhere")
    script = UserPattern("t", script="a.py", function="run")
    assert UserPattern.from_dict(call.to_dict(), base="/elsewhere") == call
    assert UserPattern.from_dict(script.to_dict()) == script
    assert call.to_dict() == {"name": "c", "call": "m.sub:f"}
    with pytest.raises(ValueError, match="exactly one"):
        UserPattern("x")
