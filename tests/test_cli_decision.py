"""``iotune recommend`` and ``show`` say whether to read in place, through references or rewritten.

The sweep is ``decision_results`` (tests/conftest.py): a CF netCDF file read as it is
(the inplace backend), through VirtualiZarr references and rewritten to Zarr, with
``compare``.  A bad ``compare``, or a bad source of the inplace backend, is one line,
exit 2; the inplace backend reads a user's function and ``batches`` from the files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow
if os.environ.get("IOTUNE_REQUIRE_VIRTUAL") != "1":  # CI: the virtual extra, so a failure
    pytest.importorskip("virtualizarr")


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_recommend_names_a_way_and_its_break_even(decision_results: Path) -> None:
    where = decision_results.parent
    proc = iotune("recommend", decision_results, "--objective", "read:timeseries", cwd=where)
    assert proc.returncode == 0, proc.stderr
    head = proc.stdout.splitlines()[0]
    assert head.startswith("in place, references or rewrite")
    chosen = head.split(": ", 1)[1].split()[0]
    assert chosen in ("in-place", "references", "rewrite")
    assert "for read:timeseries" in head
    assert "rewrite against in-place: " in proc.stdout
    assert "break-even in reads of read:timeseries" in proc.stdout
    assert "of references" in proc.stdout and "nothing (the file as it is)" in proc.stdout
    as_json = iotune(
        "recommend",
        decision_results,
        "--objective",
        "read:timeseries",
        "--format",
        "json",
        cwd=where,
    )
    decision = json.loads(as_json.stdout)["decision"]
    assert decision["choice"] == chosen and decision["objective"] == "read:timeseries"
    outcome = decision["objectives"]["read:timeseries"]
    for row in outcome["break_even"]:
        assert {"reads", "low", "high", "never", "extra_s", "saved_s"} <= set(row)
        assert row["never"] == (row["reads"] is None)
    for way in outcome["ways"]:
        assert way["read_s"] > 0 and way["one_off_bytes"] >= 0 and way["label"]


def test_show_says_the_decision(decision_results: Path) -> None:
    where = decision_results.parent
    text = iotune("show", decision_results, cwd=where)
    assert text.returncode == 0, text.stderr
    assert "in place, references or rewrite" in text.stdout
    shown = json.loads(iotune("show", decision_results, "--format", "json", cwd=where).stdout)
    assert shown["recommended"]["decision"]["compare"] == ["in-place", "references", "rewrite"]


@pytest.mark.parametrize(
    ("compare", "said"),
    [
        (
            ["rewrite", "teleport"],
            "compare[1]: unknown way 'teleport'; allowed: in-place, references, rewrite",
        ),
        (["rewrite"], "compare: expected a list of two or more ways, got ['rewrite']"),
        (
            ["rewrite", "references"],
            "compare[1]: 'references' needs a backend whose write makes references",
        ),
        (
            ["rewrite", "in-place"],
            "compare[1]: 'in-place' needs a backend whose write makes nothing (its reads open "
            "the source as it is): add one of inplace to backend (the sweep's backends: zarr)",
        ),
        (["rewrite", "rewrite"], "compare[1]: 'rewrite' is listed twice"),
    ],
)
def test_a_bad_compare_is_one_line(tmp_path: Path, compare: list, said: str) -> None:
    _source(tmp_path)
    spec = {
        "version": 1,
        "workload": {"field": "file", "path": "tas.nc", "variable": "tas"},
        "backend": "zarr",
        "compare": compare,
    }
    _refused(tmp_path, spec, said)


@pytest.mark.parametrize(
    ("workload", "parameters", "said"),
    [
        (
            {"shape": {"time": 8, "x": 8}},
            {},
            "workload.field: 'smooth' with backend inplace; allowed: file",
        ),
        (
            {"field": "file", "path": "gone.nc", "variable": "tas"},
            {},
            "gone.nc",
        ),
        (
            {"field": "file", "path": "tas.nc", "variable": "tas"},
            {"engine": "scipy"},
            "parameters.engine: unknown value 'scipy'; allowed: netcdf4, h5netcdf",
        ),
    ],
    ids=["generated", "missing", "engine"],
)
def test_a_bad_inplace_source_is_one_line(
    tmp_path: Path, workload: dict, parameters: dict, said: str
) -> None:
    _source(tmp_path)
    spec = {"version": 1, "workload": workload, "backend": "inplace", "parameters": parameters}
    _refused(tmp_path, spec, said, command="run")


def _source(folder: Path) -> None:
    import numpy as np
    import xarray as xr

    xr.Dataset({"tas": (("time", "x"), np.ones((8, 8), "f4"))}).to_netcdf(folder / "tas.nc")


def _refused(folder: Path, spec: dict, said: str, command: str = "validate") -> None:
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec))
    args = ("run", "spec.yaml", "-o", "out") if command == "run" else (command, "spec.yaml")
    proc = iotune(*args, cwd=folder)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert said in proc.stderr and "Traceback" not in proc.stderr
    assert not (folder / "out").exists() or not any((folder / "out").iterdir())


def test_inplace_reads_the_users_function_and_batches_from_the_files(tmp_path: Path) -> None:
    import numpy as np
    import xarray as xr

    folder = tmp_path / "archive"
    folder.mkdir()
    days = {"units": "days since 2000-01-01"}
    for i in range(3):  # packed int16 with a fill value: the function sees them decoded
        packed = np.arange(i * 48, (i + 1) * 48, dtype="int16").reshape(2, 4, 6)
        packed[0, 0, 0] = -32767
        xr.Dataset(
            {"tas": (("time", "lat", "lon"), packed, {"scale_factor": 0.5, "add_offset": 200.0})},
            coords={"time": ("time", np.arange(2 * i, 2 * i + 2) + 0.5, days)},
        ).to_netcdf(
            folder / f"tas_{i}.nc",
            encoding={"tas": {"zlib": True, "chunksizes": (1, 4, 6), "_FillValue": -32767}},
        )
    (tmp_path / "analysis.py").write_text("def mean(ds):\n    return ds['tas'].mean('time')\n")
    spec = {
        "version": 1,
        "name": "inplace",
        "workload": {"field": "file", "path": "archive/tas_*.nc", "variable": "tas"},
        "backend": "inplace",
        "parameters": {"engine": ["netcdf4", "h5netcdf"]},
        "read": {
            "patterns": ["full", {"name": "mean", "call": "analysis:mean"}, "batches"],
            "batches": {"sample": {"time": 1}, "batch": 2, "batches": 3, "loader": "iotune"},
        },
        "measure": {"repeats": 1, "noise_probes": 0},
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = iotune("run", "spec.yaml", "-o", "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with xr.open_dataset(tmp_path / "out" / "results.nc") as ds:
        # the function's answer matched the one on the files, with each engine
        assert list(ds["status"].values.ravel()) == ["ok", "ok"], ds["error"].values
        assert set(ds["pattern"].values) == {"full", "mean", "batches"}
        assert bool((ds["read_s"] > 0).all())
        caches = {str(c) for c in ds["read_cache"].values.ravel()} - {"", "nan"}
        assert caches == {"cold"}  # the source files evicted before every read
        source = sum(p.stat().st_size for p in folder.glob("*.nc"))
        assert set(ds["file_bytes"].values.ravel()) == {source}
