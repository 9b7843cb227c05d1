"""dask-jobqueue on a real single-node SLURM, and the ``execution.cluster`` settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dask
import pytest
import xarray as xr
import yaml

from iotune.core.errors import SpecError, UsageError
from iotune.executors.environ import WORKER_ENVIRON
from iotune.executors.jobqueue import check_job_script, jobqueue_cluster, jobqueue_options
from iotune.specfile.execution import CLUSTER_KEYS
from iotune.specfile.parse import load_spec_text

from .slurm_cluster import LocalSlurm

SPEC = {
    "workload": {"shape": {"time": 8, "y": 32, "x": 32}},
    "backend": ["memory", "netcdf4"],
    "parameters": {"chunks": [[8, 32, 32], [1, 32, 32]], "codec": ["none", "zlib"]},
    "read": {"patterns": ["full", "timeseries"], "timeseries": {"pixels": 4}},
    "measure": {"repeats": 1},
}
TRIALS = 2 * 2 * 2  # backends x chunks x codecs
JOBS = 2


def iotune(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "iotune", "run", *map(str, args), "--no-progress"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.slow
@pytest.mark.slurm
def test_serial_localcluster_and_slurm_give_the_same_results(
    local_slurm: LocalSlurm, make_spec, tmp_path: Path
) -> None:
    logs = tmp_path / "job-logs"
    cluster = {
        "kind": "slurm",
        "jobs": JOBS,
        "cores": 1,
        "memory": "2GiB",
        "walltime": "00:10:00",
        "queue": "debug",
        "interface": "lo",  # one node: the jobs reach the scheduler on localhost
        "log_directory": str(logs),
    }
    plain = make_spec(SPEC, name="plain.yaml")
    on_slurm = make_spec(
        SPEC | {"execution": {"executor": "dask", "cluster": cluster}}, name="slurm.yaml"
    )

    runs = {
        "serial": iotune(plain, "-o", tmp_path / "serial"),
        "local": iotune(plain, "-o", tmp_path / "local", "--workers", "2"),
        "slurm": iotune(on_slurm, "-o", tmp_path / "slurm", env=local_slurm.env),
    }

    for name, proc in runs.items():
        assert proc.returncode == 0, f"{name}:\n{proc.stderr}\n{local_slurm.logs()}"
    # where trials run (the dashboard line) is information now: tests/executors/test_dask_.py
    results = {name: xr.open_dataset(tmp_path / name / "results.nc") for name in runs}
    serial = results["serial"]
    assert serial.sizes["backend"] == 2
    for name, ds in results.items():
        assert dict(ds.sizes) == dict(serial.sizes), name
        assert set(ds.coords) == set(serial.coords), name
        for coord in serial.coords:
            assert list(ds[coord].values) == list(serial[coord].values), (name, coord)
        statuses = ds["status"].values.ravel()
        assert len(statuses) == TRIALS and set(statuses) == {"ok"}, (name, statuses)
        assert int(ds["write_MiBps"].notnull().sum()) == TRIALS, name
    assert [results[n].attrs["executor"] for n in runs] == ["serial", "dask", "dask"]
    assert [results[n].attrs["cluster"] for n in runs] == ["none", "local", "slurm"]

    # the workers really were SLURM jobs: each wrote its log and joined the scheduler
    job_logs = sorted(logs.glob("dask-worker-*.err"))
    assert len(job_logs) == JOBS, sorted(logs.iterdir())
    texts = [log.read_text() for log in job_logs]
    # a job still starting when the sweep finished is cancelled by the cluster's close
    for text in texts:
        assert "Registered to:" in text or "CANCELLED" in text, text
    assert any("Registered to:" in text for text in texts), texts
    assert local_slurm.job_ids() == []  # closing the cluster cancelled its jobs


@pytest.mark.slurm
def test_a_partition_slurm_does_not_have_fails_at_once_with_slurms_reason(
    local_slurm: LocalSlurm, make_spec, tmp_path: Path
) -> None:
    cluster = {"kind": "slurm", "cores": 1, "memory": "1GiB", "queue": "nosuch", "interface": "lo"}
    spec = make_spec(SPEC | {"execution": {"executor": "dask", "cluster": cluster}})

    proc = iotune(spec, "-o", tmp_path / "out", env=local_slurm.env)

    # without the check the run waited 600 s for workers that were never submitted
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("iotune: error: execution.cluster: SLURM refuses the job script:"), line
    assert "partition" in line.lower(), line
    assert local_slurm.job_ids() == []


@pytest.mark.slurm
def test_a_job_script_slurm_takes_passes_and_submits_nothing(
    local_slurm: LocalSlurm, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLURM_CONF", local_slurm.env["SLURM_CONF"])
    script = "#!/usr/bin/env bash\n#SBATCH -p debug\n#SBATCH -n 1\n#SBATCH -t 00:01:00\ntrue\n"

    check_job_script(script)

    assert local_slurm.job_ids() == []


def test_without_sbatch_the_check_names_the_missing_command() -> None:
    with pytest.raises(
        UsageError, match=r"^execution\.cluster: kind 'slurm' needs '/nonexistent/sbatch'"
    ):
        check_job_script("#!/bin/sh\n", sbatch="/nonexistent/sbatch")


def test_job_script_runs_this_python_with_the_worker_thread_limits() -> None:
    from dask_jobqueue import SLURMCluster

    spec = load_spec_cluster(
        {
            "kind": "slurm",
            "cores": 1,
            "memory": "2GiB",
            "walltime": "00:10:00",
            "queue": "debug",
            "interface": "lo",
            "job_script_prologue": ["echo started"],
        }
    )
    options = jobqueue_options(spec)
    assert "kind" not in options and "jobs" not in options
    with SLURMCluster(**options) as cluster:
        script = cluster.job_script()
    assert f"{sys.executable} -m distributed.cli.dask_worker" in script
    assert "--interface lo" in script
    assert "#SBATCH -p debug" in script and "#SBATCH --mem=2G" in script
    lines = script.splitlines()
    exports = [f"export {k}=${{{k}:-{v}}}" for k, v in WORKER_ENVIRON.items()]
    assert all(e in lines for e in exports)
    assert lines.index(exports[-1]) < lines.index("echo started")


def test_a_cluster_without_cores_or_memory_is_a_usage_error() -> None:
    with (
        dask.config.set({"jobqueue.slurm.cores": None, "jobqueue.slurm.memory": None}),
        pytest.raises(UsageError, match=r"^execution\.cluster: .*cores"),
    ):
        jobqueue_cluster({"kind": "slurm", "jobs": 1})


def load_spec_cluster(cluster: dict) -> dict:
    """The validated ``execution.cluster`` of a minimal spec with ``cluster``."""
    spec = {
        "version": 1,
        "name": "c",
        "workload": {"shape": {"time": 2, "y": 2, "x": 2}},
        "backend": "memory",
        "execution": {"executor": "dask", "cluster": cluster},
    }
    return load_spec_text(yaml.safe_dump(spec)).execution.cluster


def test_cluster_settings_are_normalised() -> None:
    cluster = load_spec_cluster(
        {"kind": "pbs", "memory": "2GiB", "walltime": "1-00:00:00", "jobs": 3}
    )
    assert cluster == {"kind": "pbs", "memory": 2 * 2**30, "walltime": "1-00:00:00", "jobs": 3}


def test_yaml_reads_an_unquoted_walltime_as_seconds() -> None:
    """The premise of refusing integer wall times."""
    assert yaml.safe_load("walltime: 12:00:00") == {"walltime": 43200}


@pytest.mark.parametrize(
    "key, value, expected",
    [
        ("cpus", 4, "unknown key; allowed: " + ", ".join(CLUSTER_KEYS)),
        ("kind", "lsf", "unknown value 'lsf'; allowed: slurm, pbs"),
        ("memory", "2 gigs", "like '512KiB', '64MiB', '1GiB', '8MB', got '2 gigs'"),
        ("memory", 0, "at least 1 byte"),
        ("walltime", 600, "600 is a number"),
        ("walltime", "ten minutes", "'ten minutes' is not a wall time; allowed: "),
        ("walltime", "1:2:3:4", "is not a wall time"),
        ("queue", 5, "expected a non-empty string, got 5"),
        ("interface", "", "expected a non-empty string, got ''"),
        ("job_script_prologue", "module load x", "expected a list of strings"),
        ("job_extra_directives", ["--exclusive", 1], "expected a list of strings"),
        ("jobs", 0, "0 is out of range"),
    ],
)
def test_a_bad_cluster_setting_is_one_line_naming_field_value_and_allowed(key, value, expected):
    with pytest.raises(SpecError) as info:
        load_spec_cluster({"kind": "slurm", key: value})
    message = str(info.value)
    assert "\n" not in message
    assert info.value.field == f"execution.cluster.{key}"
    assert expected in message, message
