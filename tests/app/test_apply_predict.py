"""``iotune apply --dry-run`` and the speedup measured after, through the command line.

A real sweep of the source file itself (``field: file``) recommends time-series chunks;
the dry run predicts, creates nothing, and its size is within 10 % of what the real
conversion then writes; the conversion times the sweep's read patterns on the source
(map chunks) and the target, and time series read faster from the target.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from iotune.app import api
from iotune.cli.main import main
from iotune.convert.after import record_path

SHAPE = {"time": 128, "y": 128, "x": 128}


def make_map_chunked(path: Path) -> Path:
    """int16 ``tas`` (4 MiB raw) in map chunks (1 x y x x) with zlib, a smooth random walk."""
    import netCDF4

    t, y, x = SHAPE.values()
    with netCDF4.Dataset(path, "w") as nc:
        for name, size in SHAPE.items():
            nc.createDimension(name, size)
        nc.createVariable("time", "f8", ("time",))[:] = np.arange(t)
        tas = nc.createVariable(
            "tas", "i2", ("time", "y", "x"), chunksizes=(1, y, x), zlib=True, complevel=1
        )
        tas.units = "K"
        walk = np.cumsum(np.random.default_rng(0).normal(0, 20, (t, y, x)), axis=0)
        tas[:] = walk.astype("i2")
    return path


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[Path, Path]:
    """(results, source): the source swept in map and time-series chunks, zlib."""
    where = tmp_path_factory.mktemp("predict")
    source = make_map_chunked(where / "source.nc")
    spec = {
        "version": 1,
        "name": "predict",
        "backend": "netcdf4",
        "workload": {"field": "file", "path": str(source), "variable": "tas"},
        "parameters": {"chunks": [[128, 16, 16], [1, 128, 128]], "codec": ["zlib"]},
        "read": {"patterns": ["spatial", "timeseries"], "timeseries": {"pixels": 4}},
        "measure": {"repeats": 5},  # measured after as often: 5 cold reads per side
    }
    (where / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    api.run(where / "spec.yaml", out=where / "results", progress=False)
    return where / "results", source


def listing(where: Path) -> list[str]:
    return sorted(p.name for p in where.iterdir())


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["apply", *args, "--no-progress", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_dry_run_predicts_creates_nothing_and_the_size_holds(
    swept, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, source = swept
    target = tmp_path / "out.nc"
    common = [str(results), str(source), "-o", str(target), "--objective", "read:timeseries"]
    assert main(["apply", *common, "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "nothing created" in text and "size: about" in text and "peak memory" in text
    assert listing(tmp_path) == []  # no target, no partial, no journal
    predicted = run_json([*common, "--dry-run"], capsys)
    assert listing(tmp_path) == []
    assert predicted["settings"].startswith("backend=netcdf4 chunks=128x16x16 codec=zlib")
    assert predicted["seconds"] > 0 and predicted["probe"]["cache"] == "cold"
    assert predicted["probe"]["verify_MiBps"] > 0
    assert predicted["peak_bytes"] >= 2 * predicted["raw_bytes"]  # one region: all of it
    done = run_json([*common, "--no-measure"], capsys)
    assert abs(predicted["size_bytes"] / done["bytes_after"] - 1) < 0.10
    assert not record_path(target).exists()  # --no-measure


def test_measured_after_stores_each_patterns_speedup_beside_the_target(
    swept, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, source = swept
    target = tmp_path / "out.nc"
    args = [str(results), str(source), "-o", str(target), "--objective", "read:timeseries"]
    report = run_json(args, capsys)
    record = json.loads(record_path(target).read_text())
    assert report["after"] == record
    assert record["repeats"] == 5 and record["variable"] == "tas"
    assert record["settings"] == report["settings"]
    for key in ("iotune_version", "host", "date", "source", "method", "results"):
        assert record[key]
    assert set(record["patterns"]) == {"spatial", "timeseries"}  # the sweep's patterns
    for row in record["patterns"].values():
        assert len(row["source_s"]) == len(row["target_s"]) == record["repeats"]
        assert row["low"] <= row["speedup"] <= row["high"]
        assert set(row["cache_source"]) == set(row["cache_target"]) == {"cold"}
    series = record["patterns"]["timeseries"]
    # 128 map chunks decompressed against 4 time-series chunks: 2-3x on an idle machine
    assert series["speedup"] > 1.3, series
    run_json([*args, "--overwrite", "--no-measure"], capsys)
    assert not record_path(target).exists()  # the replaced target's record went with it


def test_settings_without_results_measure_the_asked_patterns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_map_chunked(tmp_path / "source.nc")
    target = tmp_path / "out.zarr"
    settings = ["--settings", "chunks=128x16x16 codec=zlib backend=zarr"]
    predicted = run_json([*settings, str(source), "-o", str(target), "--dry-run"], capsys)
    assert predicted["size_bytes"] is None and predicted["seconds"] is None
    assert main(["apply", *settings, str(source), "-o", str(target), "--dry-run"]) == 0
    assert capsys.readouterr().out.count("no sweep measured this configuration") == 2
    assert listing(tmp_path) == ["source.nc"]
    args = [*settings, str(source), "-o", str(target), "--patterns", "timeseries"]
    report = run_json(args, capsys)
    assert list(report["after"]["patterns"]) == ["timeseries"]
    # every object the store holds was predicted (zarr skips chunks of fill values only)
    objects = sum(1 for p in target.rglob("*") if p.is_file())
    assert objects <= predicted["requests"]["PUT"] <= objects + 2


def test_a_pattern_that_cannot_be_measured_is_refused_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_map_chunked(tmp_path / "source.nc")
    args = ["--settings", "chunks=128x16x16", str(source), "-o", str(tmp_path / "out.nc")]
    assert main(["apply", *args, "--patterns", "timeseries,batches"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--patterns" in err[0] and "'batches'" in err[0]
    assert listing(tmp_path) == ["source.nc"]
