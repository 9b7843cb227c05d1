"""Quantised targets: written with the library's quantisation, verified within the error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from iotune.cli.main import main
from iotune.convert.convert import convert, prepare
from iotune.convert.layout import layout_of
from iotune.core.errors import VerificationError
from tests.convert.conftest import make_cf_source

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = "chunks=8x8x8 codec=zlib level=1 quantize=bitround:6"
LIMIT = 2.0**-7  # bitround:6 keeps 6 mantissa bits: relative error at most 2**-7


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_a_quantised_layout_is_verified_within_its_error(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_cf_source(tmp_path / "source.nc")
    target = tmp_path / f"out{suffix}"
    args = ["--settings", SETTINGS, "--variables", "pr", "--verify", "full", "--no-progress"]
    assert main(["apply", *args, str(source), "-o", str(target), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    pr = report["variables"][0]
    assert 0 < pr["max_rel_error"] <= LIMIT  # quantised, within the bound
    assert report["error_limit"] == {
        "quantize": "bitround:6",
        "max_rel_error": LIMIT,
        "max_abs_error": None,
    }
    assert report["settings"].endswith("quantize=bitround:6")
    if suffix == ".nc":
        import netCDF4

        with netCDF4.Dataset(target) as nc:
            assert nc["pr"].quantization() == (6, "BitRound")
            assert nc["tas"].quantization() is None  # not converted: its own storage
    else:
        import zarr

        array = zarr.open_array(target / "pr", mode="r")
        assert [type(f).__name__ for f in array.filters] == ["BitRound"]
        assert array.filters[0].codec_config["keepbits"] == 6


def test_the_text_report_shows_the_largest_error(tmp_path: Path, capsys) -> None:
    source = make_cf_source(tmp_path / "source.nc")
    args = ["--settings", SETTINGS, "--variables", "pr", "--no-progress", str(source)]
    assert main(["apply", *args, "-o", str(tmp_path / "out.nc")]) == 0
    out = capsys.readouterr().out
    assert "    largest error " in out
    assert f"allowed bitround:6: relative {LIMIT:.2g}" in out


def corrupt(store: Path) -> None:
    """One value of ``pr`` far beyond the quantisation's error, as a bad disk might."""
    import zarr

    array = zarr.open_array(store / "pr", mode="r+")
    array[20, 3, 3] = float(array[20, 3, 3]) * 2 + 1


def test_a_value_beyond_the_error_fails_verification(tmp_path: Path) -> None:
    source = make_cf_source(tmp_path / "source.nc")
    target = tmp_path / "out.zarr"
    layout = layout_of({"backend": "zarr", "chunks": "8x8x8", "quantize": "digits:3"})
    job = prepare(source, target, layout, variables=["pr"], max_mem=100_000)
    written = []

    def hook(nbytes: int) -> None:  # after the last region, before verification
        written.append(nbytes)
        if sum(written) == job.total_bytes and nbytes:
            corrupt(job.partial)

    with pytest.raises(VerificationError, match=r"verify: pr rows 16-24 of time differs from"):
        convert(job, verify_mode="full", on_bytes=hook)
    assert job.partial.exists() and not target.exists()


def test_a_corrupted_target_exits_1_through_the_command(tmp_path: Path) -> None:
    source = make_cf_source(tmp_path / "source.nc")
    target = tmp_path / "out.zarr"
    partial = tmp_path / "out.zarr.iotune-partial"
    journal = tmp_path / "out.zarr.iotune-journal"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IOTUNE_APPLY_REGION_DELAY": "0.5"}
    args = ["--settings", SETTINGS, "--variables", "pr", "--verify", "full", "--max-mem", "200KB"]
    args += ["--no-progress", str(source), "-o", str(target)]
    running = subprocess.Popen(
        [sys.executable, "-W", "ignore", "-m", "iotune", "apply", *args],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    import zarr  # noqa: F401 (imported before the race: corrupt() has 0.5 s)

    while running.poll() is None and time.monotonic() < deadline:  # it sleeps 0.5 s after
        # the last region's line, then verifies
        lines = journal.read_text().splitlines() if journal.exists() else []
        if lines and json.loads(lines[-1]).get("stop") == 40:
            break
        time.sleep(0.02)
    corrupt(partial)
    assert running.wait(60) == 1
    err = running.stderr.read().strip().splitlines()  # type: ignore[union-attr]
    assert len(err) == 1 and err[0].startswith("iotune: verify: pr rows 16-")
    assert "beyond the error allowed by quantize bitround:6" in err[0]
    assert not target.exists() and partial.exists()


def test_quantisation_that_would_change_a_zarr_fill_value_is_refused(
    tmp_path: Path, capsys
) -> None:
    import netCDF4

    source = make_cf_source(tmp_path / "source.nc")
    with netCDF4.Dataset(source, "a") as nc:
        nc.createVariable("rain", "f4", ("time", "y", "x"), fill_value=-999.0)[:] = np.ones(
            (40, 32, 24)
        )
    args = ["--settings", "chunks=8x8x8 backend=zarr quantize=bitround:4", "--variables", "rain"]
    assert main(["apply", *args, str(source), "-o", str(tmp_path / "out.zarr")]) == 2
    assert capsys.readouterr().err.strip() == (
        "iotune: error: rain: quantize bitround:4 in zarr would change its _FillValue -999.0 "
        "(BitRound rounds every value); keep more bits or write netcdf4"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source.nc"]


QUANTISED_SWEEP = {
    "version": 1,
    "name": "apply-quantised",
    "backend": "netcdf4",
    "workload": {"shape": {"time": 32, "y": 64, "x": 64}, "dtype": "float32"},
    "parameters": {"chunks": [[32, 16, 16]], "codec": ["zlib"], "quantize": ["bitround:8"]},
    "read": {"patterns": ["timeseries"], "timeseries": {"pixels": 4}},
    "measure": {"repeats": 2},
}


def test_a_quantised_recommendation_is_applied_within_the_objective_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import netCDF4
    import yaml

    from iotune.app import api

    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(QUANTISED_SWEEP, sort_keys=False))
    api.run(tmp_path / "spec.yaml", out=tmp_path / "results", progress=False)
    source = make_cf_source(tmp_path / "source.nc")
    target = tmp_path / "out.nc"
    args = ["--max-error", "1", "--variables", "pr", "--verify", "full", "--format", "json"]
    assert main(["apply", str(tmp_path / "results"), str(source), "-o", str(target), *args]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["settings"].endswith("quantize=bitround:8")
    assert report["error_limit"] == {
        "quantize": "bitround:8",
        "max_rel_error": 2.0**-9,
        "max_abs_error": 1.0,  # the objective's --max-error
    }
    assert 0 < report["variables"][0]["max_rel_error"] <= 2.0**-9
    with netCDF4.Dataset(target) as nc:
        assert nc["pr"].quantization() == (8, "BitRound")
