"""Storage trials: one at a time per host (``per_host``), host-parallel across hosts.

The single-node SLURM the tests start is one machine, so two hosts are made the way
the executor tells hosts apart, by their workers' addresses: each job's worker
listens on its own loopback address (127.0.0.2, 127.0.0.3 ...; Linux routes all of
127/8 to the loopback), which the job script's ``python`` sets for it.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest

from .slurm_cluster import LocalSlurm

# storage trials long enough (a few tenths of a second a repeat) to overlap when allowed
SPEC = {
    "workload": {"shape": {"time": 32, "y": 256, "x": 256}},
    "backend": "netcdf4",
    "parameters": {"chunks": [[32, 16, 16], [1, 256, 256]], "codec": ["none", "zlib"]},
    "read": {"patterns": ["timeseries"], "timeseries": {"pixels": 16}},
    "measure": {"repeats": 3},
}
#: a job script's python: the job's worker listens on an address of its own
OWN_ADDRESS = """#!/usr/bin/env bash
args=()
while (($#)); do
    if [[ $1 == --interface ]]; then
        args+=(--host "127.0.0.$((2 + SLURM_JOB_ID % 250))")
        shift 2
    else
        args+=("$1")
        shift
    fi
done
exec {python} "${{args[@]}}"
"""


def _run(spec: Path, out: Path, *args: str, env: dict[str, str] | None = None) -> None:
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out), "--no-progress"]
    proc = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr


def _spans(out: Path) -> list[tuple[float, float]]:
    """(started, ended) of each repeat and noise probe in the run's journal (not of
    the whole trials, which span their interleaved repeats)."""
    lines = (out / "journal.jsonl").read_text().splitlines()[1:]
    records = [json.loads(line) for line in lines]
    spans = [(r["started"], r["ended"]) for r in records if "part" in r or "probe" in r]
    assert len(spans) >= 4 * SPEC["measure"]["repeats"], records
    return spans


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    if any(a[0] < b[1] and b[0] < a[1] for a, b in combinations(spans, 2)):
        return 2
    return 1


def test_one_host_runs_one_storage_trial_at_a_time(make_spec, tmp_path: Path) -> None:
    spec = make_spec(SPEC)

    _run(spec, tmp_path / "out", "--workers", "2")

    assert _most_at_once(_spans(tmp_path / "out")) == 1


@pytest.mark.slow
@pytest.mark.slurm
def test_two_hosts_run_storage_trials_at_once(
    local_slurm: LocalSlurm, make_spec, tmp_path: Path
) -> None:
    python = tmp_path / "python-own-address"
    python.write_text(OWN_ADDRESS.format(python=sys.executable))
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    logs = tmp_path / "job-logs"
    cluster = {
        "kind": "slurm",
        "jobs": 2,
        "cores": 1,
        "memory": "2GiB",
        "walltime": "00:10:00",
        "queue": "debug",
        "interface": "lo",  # the scheduler's; each worker's is replaced by its own address
        "python": str(python),
        "log_directory": str(logs),
    }
    spec = make_spec(SPEC | {"execution": {"executor": "dask", "cluster": cluster}})

    _run(spec, tmp_path / "out", env=local_slurm.env)

    texts = [log.read_text() for log in sorted(logs.glob("dask-worker-*.err"))]
    hosts = {
        line.split("tcp://")[1].split(":")[0]
        for t in texts
        for line in t.splitlines()
        if "Start worker at:" in line
    }
    assert len(hosts) == 2, texts
    assert _most_at_once(_spans(tmp_path / "out")) == 2, local_slurm.logs()
