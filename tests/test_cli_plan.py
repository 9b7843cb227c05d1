"""``iotune plan`` says what a sweep will cost; ``run`` warns of a trial that is most of it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

SPEC = {
    "version": 1,
    "name": "costly",
    "workload": {"shape": {"time": 32, "y": 128, "x": 128}, "dtype": "int16"},
    "backend": "netcdf4",
    "parameters": {
        "chunks": [[32, 16, 16], [1, 128, 128]],
        "codec": ["none", "bzip2"],
        "chunk_cache": "64KiB",
    },
    "read": {"patterns": ["full", "timeseries"], "timeseries": {"pixels": 16}},
    "measure": {"repeats": 1, "noise_probes": 0},
}


def iotune(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


def write(tmp_path: Path, spec: dict) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def test_plan_predicts_the_wall_time_per_worker_count_and_the_scratch_it_needs(tmp_path):
    spec = write(tmp_path, SPEC)
    proc = iotune("plan", spec, "--scratch", tmp_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    wall = next(x for x in lines if x.startswith("predicted wall time: "))
    counts = re.findall(r"(\d+) workers? ([\d.]+ (?:ms|s|min|h))", wall)
    assert [int(k) for k, _ in counts] == [1, 2, 4, 8, 16]
    assert any("run 1 at a time per host" in x for x in lines)  # why more workers buy little
    longest = next(x for x in lines if x.strip().startswith("longest trial: "))
    assert "chunks=1x128x128 codec=bzip2" in longest  # a map per chunk, reread per pixel
    # the largest file a trial holds: the uncompressed one, 1 MiB of int16
    assert lines[-1].startswith(f"scratch needed: up to 1MiB at a time in {tmp_path} (free: ")
    assert not list(tmp_path.glob("iotune-probe-*"))  # the probe cleans up after itself


def test_plan_json_has_the_forecast_of_every_trial_and_no_forecast_skips_the_probe(tmp_path):
    spec = write(tmp_path, SPEC)
    found = json.loads(iotune("plan", spec, "--format", "json", cwd=tmp_path).stdout)
    forecast = found["forecast"]
    assert set(forecast["trials"]) == {t["id"] for t in found["trials"]}
    assert list(forecast["wall_s"]) == ["1", "2", "4", "8", "16"]
    assert forecast["wall_s"]["1"] >= sum(forecast["trials"].values())
    assert forecast["scratch_bytes"] == 32 * 128 * 128 * 2
    bare = iotune("plan", spec, "--no-forecast", cwd=tmp_path)
    assert bare.returncode == 0 and "predicted" not in bare.stdout
    assert "forecast" not in json.loads(
        iotune("plan", spec, "--no-forecast", "--format", "json", cwd=tmp_path).stdout
    )


def test_plan_refuses_a_scratch_that_is_not_a_directory(tmp_path):
    proc = iotune("plan", write(tmp_path, SPEC), "--scratch", tmp_path / "nope", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert (
        proc.stderr.strip()
        == f"iotune: error: --scratch {tmp_path / 'nope'}: not an existing directory"
    )


BALANCED = {"chunks": [[32, 16, 16], [8, 64, 64]], "codec": ["none", "zlib"]}


#: 64 pixels x 32 maps: 2048 bzip2 chunks decoded at 1x128x128, seconds on any machine
#: (the warning needs a second or more, and 16 pixels came close to it on a quiet one)
MANY_PIXELS = {"patterns": ["full", "timeseries"], "timeseries": {"pixels": 64}}


@pytest.mark.parametrize("changes, warned", [({}, True), (BALANCED, False)])
def test_run_warns_of_a_trial_predicted_to_be_most_of_the_sweep(tmp_path, changes, warned):
    read = MANY_PIXELS if warned else SPEC["read"]
    spec = write(tmp_path, SPEC | {"parameters": SPEC["parameters"] | changes, "read": read})
    proc = iotune("run", spec, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    said = [x for x in proc.stderr.splitlines() if "is predicted to take" in x]
    if not warned:
        assert said == []
        return
    (line,) = said
    assert line.startswith("iotune: warning: trial ")
    assert "chunks=1x128x128 codec=bzip2" in line and "of the sweep's trials" in line
    assert line.endswith("iotune plan shows the forecast per trial")
