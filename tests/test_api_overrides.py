"""iotune.app.api.load_spec(path, overrides=...): change a sweep without editing its YAML."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import iotune
from iotune.app.api import load_spec
from iotune.core.errors import SpecError

QUICK = Path(__file__).resolve().parents[1] / "sweeps" / "quick.yaml"


def test_no_overrides_is_the_file() -> None:
    assert load_spec(QUICK) == iotune.specfile.parse.load_spec(QUICK)


def test_dotted_keys_change_lists_scalars_and_nested_values() -> None:
    sweep = load_spec(
        QUICK,
        overrides={
            "parameters.codec": ["zlib", "none"],
            "workload.shape.time": 16,
            "parameters.chunks": [[16, 32, 32], [1, 256, 256]],
            "measure.repeats": 1,
        },
    )
    params = {p.name: p for p in sweep.parameters}
    assert params["codec"].values == ("zlib", "none")
    assert sweep.workload.shape == (16, 256, 256)
    assert params["chunks"].labels() == ("16x32x32", "1x256x256")
    assert sweep.measure.repeats == 1


def test_missing_sections_are_created_and_none_removes_a_key() -> None:
    sweep = load_spec(
        QUICK, overrides={"execution.executor": "dask", "parameters.chunk_cache": None}
    )
    assert sweep.execution.executor == "dask"
    assert "chunk_cache" not in {p.name for p in sweep.parameters}


def test_text_records_the_effective_spec(tmp_path: Path) -> None:
    sweep = load_spec(QUICK, overrides={"parameters.codec": ("zlib",)})
    assert sweep.text.startswith(f"# {QUICK} with overrides: parameters.codec=")
    data = yaml.safe_load(sweep.text)
    assert data["parameters"]["codec"] == ["zlib"]
    assert data["workload"]["shape"] == {"time": 64, "y": 256, "x": 256}


def test_the_override_does_not_change_the_file() -> None:
    before = QUICK.read_text()
    load_spec(QUICK, overrides={"parameters.codec": ["zlib"]})
    assert QUICK.read_text() == before


def test_bad_value_is_reported_with_its_field() -> None:
    with pytest.raises(SpecError) as err:
        load_spec(QUICK, overrides={"parameters.codec": ["zlib", "lzma"]})
    assert "parameters.codec[1]" in str(err.value)
    assert "lzma" in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_key_is_reported_with_the_allowed_ones() -> None:
    with pytest.raises(SpecError, match=r"parameters\.codek: unknown key; allowed: .*codec"):
        load_spec(QUICK, overrides={"parameters.codek": ["zlib"]})


def test_a_key_through_a_scalar_names_the_scalar() -> None:
    with pytest.raises(SpecError, match=r"backend: override 'backend.name'"):
        load_spec(QUICK, overrides={"backend.name": "h5py"})


@pytest.mark.parametrize("key", ["", "parameters..codec", 3])
def test_malformed_keys_are_refused(key: object) -> None:
    with pytest.raises(SpecError, match=r"overrides: .* is not a dotted key"):
        load_spec(QUICK, overrides={key: 1})


def test_a_missing_file_is_still_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read spec"):
        load_spec(tmp_path / "nope.yaml", overrides={"measure.repeats": 1})


def test_public_api_uses_the_overriding_loader() -> None:
    sweep = iotune.load_spec(QUICK, overrides={"measure.repeats": 1})
    assert sweep.measure.repeats == 1
