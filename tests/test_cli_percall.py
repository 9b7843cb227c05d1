"""A user's function is ranked and reported by its seconds a call, through the command line.

The function's bytes are what came from storage, and a compressed file reads fewer of
them: ranked by MiB/s, compression would lose however fast the call.  A tiny file of
smooth (compressible) data, swept over ``codec`` none and zlib, shows it: the
recommendation for ``read:NAME`` is the point with the fewest median seconds a call,
and ``recommend``, ``show`` and ``run`` say seconds a call with their interval, MiB/s
beside as information only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

pytestmark = pytest.mark.slow

ANALYSIS = '''
def boxmean(ds):
    """The first half of the latitudes, averaged over time."""
    return ds["tas"].isel(lat=slice(0, 10)).mean("time")
'''
OBJECTIVE = "read:boxmean"


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


def write_source(path: Path) -> None:
    """tas(time, lat, lon), float32, smooth: zlib stores it in a fraction of the bytes."""
    t, y, x = np.ogrid[0:48, 0:20, 0:20]
    data = (280 + 10 * np.sin(t / 8) + np.cos(y / 5) + 0.1 * x).astype("float32")
    coords = {"time": np.arange(48), "lat": np.linspace(-80, 80, 20), "lon": np.arange(20) * 18.0}
    xr.Dataset({"tas": (("time", "lat", "lon"), data)}, coords=coords).to_netcdf(path)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The sweep over codec none and zlib, run once, and what the commands say of it."""
    folder = tmp_path_factory.mktemp("percall")
    write_source(folder / "tas.nc")
    (folder / "analysis.py").write_text(ANALYSIS)
    spec = {
        "version": 1,
        "name": "percall",
        "workload": {"field": "file", "path": "tas.nc", "variable": "tas"},
        "backend": "netcdf4",
        "parameters": {"chunks": [[48, 20, 20]], "codec": ["none", "zlib"]},
        "read": {"patterns": [{"name": "boxmean", "call": "analysis:boxmean"}]},
        "measure": {"repeats": 3, "noise_probes": 0},
    }
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    ran = iotune("run", "spec.yaml", "-o", "out", "--no-progress", cwd=folder)
    assert ran.returncode == 0, ran.stderr
    # no tie-break: the pick is the leader, the fastest call
    pick = ("--objective", OBJECTIVE, "--max-tie-loss", "0")
    found = iotune("recommend", "out", *pick, "--format", "json", cwd=folder)
    return {"folder": folder, "ran": ran, "pick": pick, "json": found}


def medians(folder: Path) -> tuple[dict[str, float], dict[str, float]]:
    """Each ok codec's median seconds a call and the bytes its call read from storage."""
    with xr.open_dataset(folder / "out" / "results.nc") as ds:
        point = ds.sel(pattern="boxmean").squeeze()
        ok = point["status"].values.astype(str) == "ok"
        codecs = point["codec"].values.astype(str)
        seconds = point["read_s"].median("repeat").values
        nbytes = point["read_bytes"].values
    return (
        {c: float(s) for c, s, k in zip(codecs, seconds, ok, strict=True) if k},
        {c: float(b) for c, b, k in zip(codecs, nbytes, ok, strict=True) if k},
    )


def test_the_pick_is_the_fewest_seconds_a_call(swept: dict) -> None:
    seconds, nbytes = medians(swept["folder"])
    assert set(seconds) == {"none", "zlib"}
    assert nbytes["zlib"] < nbytes["none"] / 2  # MiB/s would rank by this, not the time
    found = json.loads(swept["json"].stdout)
    fastest = min(seconds, key=seconds.__getitem__)
    assert found["winner"]["coords"]["codec"] == fastest, (seconds, found["winner"]["label"])
    per_call = found["seconds_per_call"]
    assert per_call["metric"] == OBJECTIVE
    assert per_call["median"] == pytest.approx(seconds[fastest], rel=1e-6)
    assert 0 < per_call["low"] <= per_call["median"] <= per_call["high"]
    assert found["winner"]["units"] == {OBJECTIVE: "calls/s"}


def test_recommend_says_seconds_a_call_with_the_interval(swept: dict) -> None:
    done = iotune("recommend", "out", *swept["pick"], cwd=swept["folder"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    head = next(x for x in lines if x.startswith("objective: "))
    said = f"objective: {OBJECTIVE} (seconds a call of your code, median of 3 repeats"
    assert head.startswith(said), head
    winner = lines[lines.index(next(x for x in lines if x.startswith("winner:"))) + 1].split()
    # read:boxmean 6.16 ms a call [4.9 ms to 6.4 ms], 14.0 MiB/s from storage
    assert winner[0] == OBJECTIVE and winner[3:5] == ["a", "call"], winner
    assert winner[5].startswith("[") and "to" in winner, winner  # the interval, in seconds
    assert " ".join(winner).endswith("MiB/s from storage")


def test_show_and_run_say_seconds_a_call(swept: dict) -> None:
    folder = swept["folder"]
    shown = iotune("show", "out", cwd=folder).stdout.splitlines()
    assert f"{OBJECTIVE} (a call)" in shown[1], shown[1]  # the table's column
    ran = swept["ran"].stdout.splitlines()
    # run's best per metric: below its heading (the pick's speedup lines, wrapped above it,
    # may start with the metric too)
    table = ran[ran.index("best configuration (median of repeats):") :]
    best = next(x for x in table if x.strip().startswith(OBJECTIVE))
    assert best.split()[3:5] == ["a", "call"] and "MiB/s from storage" in best, best
    assert any(x.startswith(f"recommended for {OBJECTIVE}: ") for x in ran)
    found = json.loads(iotune("show", "out", "--format", "json", cwd=folder).stdout)
    row = next(r for r in found["best"] if r["metric"] == OBJECTIVE)
    seconds, _ = medians(swept["folder"])
    assert row["seconds_per_call"]["median"] == pytest.approx(min(seconds.values()), rel=1e-6)
    assert row["seconds_per_call"]["low"] <= row["seconds_per_call"]["high"]
    assert found["units"] == {"write": "MiB/s", OBJECTIVE: "calls/s"}
    assert found["recommended"]["seconds_per_call"]["metric"] == OBJECTIVE
