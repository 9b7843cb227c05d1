"""A real search on a time budget: netCDF4 files at two fidelities, killed and resumed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import iotune
from tests.search.test_tune import kill_after

BUDGET = 12.0
SPEC = {
    "version": 1,
    "name": "timed-search",
    "workload": {"shape": {"time": 128, "y": 256, "x": 256}, "dtype": "int16"},  # 16 MiB
    "backend": "netcdf4",
    "parameters": {
        "chunks": [[16, 32, 32], [16, 64, 64], [4, 128, 128], [1, 256, 256]],
        "codec": ["none", "zlib", "zstd", "blosc-lz4"],
        "level": [1, 5, 9],
        "chunk_cache": ["256KiB", "1MiB", "4MiB"],
        "fidelity": [0.125, 1],
    },
    "read": {"patterns": ["spatial"], "spatial": {"time": 4, "y": 0.5, "x": 0.5}},
    "measure": {"repeats": 3, "cache": "cold", "fsync": True},
    "search": {"budget": f"{BUDGET:g}s", "objective": "read:spatial", "seed": 1},
}


def journal(out: Path) -> list[dict]:
    lines = (out / "journal.jsonl").read_text().splitlines()[1:]
    return [json.loads(line) for line in lines if line.strip()]


def seconds(record: dict) -> float:
    return record["busy_s"] or record["ended"] - record["started"]


@pytest.mark.slow
def test_a_time_budget_is_kept_and_a_killed_search_resumes(tmp_path: Path) -> None:
    spec, out = tmp_path / "timed.yaml", tmp_path / "out"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    command = [sys.executable, "-m", "iotune", "tune", str(spec), "-o", str(out), "--no-progress"]
    kill_after(command, out, trials=4)
    before = journal(out)
    assert len(before) >= 4 and sum(map(seconds, before)) < BUDGET
    done = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    records = journal(out)
    ids = [r["id"] for r in records]
    assert ids[: len(before)] == [r["id"] for r in before]
    assert len(ids) == len(set(ids))  # no trial measured twice
    spent = sum(map(seconds, records))
    longest = max(map(seconds, records))
    assert spent <= BUDGET + longest  # stopped within the budget plus one trial
    ds = iotune.open_results(out)
    configs = {
        tuple(str(ds[n].values[i]) for n in SPEC["parameters"] if n != "fidelity")
        for i in range(ds.sizes["point"])
    }
    # the whole budget, unless every configuration was measured first (nothing left to learn)
    assert spent >= BUDGET or len(configs) == ds.attrs["search_applicable"]
    assert ds.attrs["search_budget_unit"] == "s"
    assert ds.attrs["search_spent"] == pytest.approx(spent)
    assert set(ds["fidelity"].values) == {0.125, 1.0}  # cheap trials, and full size
    assert "recommended for read:spatial" in done.stdout and "of a 12 s budget" in done.stdout
    assert json.loads(ds.attrs["search_recommended"])["fidelity"] == 1.0
