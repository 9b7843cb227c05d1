"""A sweep over dask chunks through the ``iotune`` command: read through xarray, splits recorded.

The stored chunks are 4 steps long: ``storage`` reads one dask chunk per stored
chunk, ``{time: 3}`` puts dask boundaries inside stored chunks, which the
trial records and ``show`` lists; ``recommend`` prints the ``open_dataset`` line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import xarray as xr
import yaml

pytestmark = pytest.mark.slow  # two trials through the command: about 15 s

SPEC = {
    "version": 1,
    "name": "dask",
    "workload": {"shape": {"time": 12, "y": 16, "x": 16}},
    "backend": "netcdf4",
    "parameters": {
        "chunks": [[4, 16, 16]],
        "dask_chunks": ["storage", {"time": 3}],
        "dask_threads": 2,
    },
    "read": {"patterns": ["full", "spatial", "timeseries", "random"], "random": {"ops": 4}},
    "measure": {"repeats": 1, "noise_probes": 0},
}


def iotune(*args: str | Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def dask_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("dask")
    spec = tmp / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    proc = iotune("run", spec, "-o", tmp / "out", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    return tmp / "out"


def test_both_dask_chunkings_read_cold_and_the_split_is_recorded(dask_run: Path) -> None:
    ds = xr.open_dataset(dask_run / "results.nc")
    assert list(ds["dask_chunks"].values) == ["storage", "time=3"]
    assert set(ds["status"].values.ravel()) == {"ok"}
    assert set(ds["read_cache"].values.ravel()) == {"cold"}
    props = {
        str(label): json.loads(str(ds["file_properties"].sel(dask_chunks=label).values.item()))
        for label in ds["dask_chunks"].values
    }
    assert props["storage"]["dask_chunks_read"] == "time=4,y=16,x=16"
    assert "dask_chunks_split" not in props["storage"]  # aligned: nothing recorded
    assert props["time=3"]["dask_chunks_read"] == "time=3,y=16,x=16"
    assert props["time=3"]["dask_chunks_split"] == "time"
    effective = json.loads(str(ds["effective"].sel(dask_chunks="time=3").values.item()))
    assert effective["dask_threads"] == 2


def test_show_names_the_points_whose_dask_chunks_split(dask_run: Path) -> None:
    proc = iotune("show", dask_run)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    head = lines.index(
        "dask chunks that split stored chunks (xarray reads those chunks more than once):"
    )
    assert lines[head + 1] == "  chunks=4x16x16 dask_chunks=time=3: along time"
    # the only one: the pick with its cost follows (or, first, that this noise cannot
    # decide: issue 44), then the best per metric
    said = ("recommended for ", "keep your settings (", "cannot decide at this noise: ")
    assert lines[head + 2].startswith(said)
    assert lines.count("best configuration (median of repeats):") == 1
    shown = json.loads(iotune("show", dask_run, "--format", "json").stdout)
    assert [row["dims"] for row in shown["dask_chunks_split"]] == ["time"]


def test_recommend_prints_the_open_dataset_line(dask_run: Path) -> None:
    proc = iotune("recommend", dask_run, "--objective", "read:timeseries")
    assert proc.returncode == 0, proc.stderr
    assert "xarray, open as measured (dask chunks):" in proc.stdout
    assert 'dask.config.set(scheduler="threads", num_workers=2)' in proc.stdout
    winner = proc.stdout.split("winner:")[1].splitlines()[0]
    chunks = "{'time': 4, 'y': 16, 'x': 16}" if "storage" in winner else "{'time': 3}"
    assert f"ds = xr.open_dataset('file.nc', engine='netcdf4', chunks={chunks})" in proc.stdout
