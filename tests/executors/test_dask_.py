"""The dask executor on a real LocalCluster, and the faults a sweep must survive."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import xarray as xr

pytestmark = pytest.mark.slow


def iotune(*args, **kw) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


SPEC = {
    "workload": {"shape": {"time": 16, "y": 64, "x": 64}},
    "parameters": {"chunks": [[16, 16, 16], [1, 64, 64]], "codec": ["none", "zlib"]},
    "read": {"patterns": ["full", "timeseries"], "timeseries": {"pixels": 4}},
    "measure": {"repeats": 1},
}


def test_serial_and_dask_give_the_same_coordinates(make_spec, tmp_path):
    spec = make_spec(SPEC)
    serial = iotune("run", spec, "-o", tmp_path / "s", "--no-progress")
    dask = iotune("run", spec, "-o", tmp_path / "d", "--workers", "2", "--no-progress")
    assert serial.returncode == 0, serial.stderr
    assert dask.returncode == 0, dask.stderr
    a, b = xr.open_dataset(tmp_path / "s/results.nc"), xr.open_dataset(tmp_path / "d/results.nc")
    assert dict(a.sizes) == dict(b.sizes)
    for name in a.coords:
        assert list(a[name].values) == list(b[name].values)
    assert set(b["status"].values.ravel()) == {"ok"}
    assert b.attrs["executor"] == "dask" and b.attrs["contended"] == "false"
    assert float(b["resident_fraction"].max()) <= 0.05
    # each run says how busy it kept its workers, and its results keep the figures
    for proc, ds, workers in ((serial, a, 1), (dask, b, 2)):
        noun = "worker" if workers == 1 else "workers"
        line = re.search(
            rf"efficiency: {workers} {noun} busy (\d+) % of ([\d.]+) s; "
            r"start-up ([\d.]+) s, tail ([\d.]+) s with idle workers",
            proc.stdout,
        )
        assert line, proc.stdout
        busy, span, startup, tail = map(float, line.groups())
        assert 0 < busy <= 100 and span > 0 and startup > 0 and 0 <= tail <= span
        assert ds.attrs["provenance_efficiency_workers"] == str(workers)
        assert float(ds.attrs["provenance_efficiency_busy"]) == pytest.approx(busy / 100, abs=0.006)
        assert float(ds.attrs["provenance_efficiency_startup_s"]) == pytest.approx(
            startup, abs=0.06
        )


def test_where_trials_run_is_logged_as_information(make_spec, tmp_path, caplog):
    """The dashboard line: shown with ``-v`` (INFO), not among the CLI's default warnings."""
    import iotune

    caplog.set_level(logging.INFO, logger="iotune")
    spec = make_spec(SPEC | {"measure": {"repeats": 1}, "read": {"patterns": ["full"]}})
    iotune.run(spec, out=tmp_path / "d", workers=2, progress=False)
    (said,) = [r for r in caplog.records if "dashboard http" in r.getMessage()]
    assert said.levelno == logging.INFO and said.name == "iotune.app.session"
    assert said.getMessage().startswith("dask: 2 workers, at most 1 storage trial(s) per host")


def test_per_host_above_one_is_recorded_as_contended(make_spec, tmp_path):
    spec = make_spec(SPEC | {"measure": {"repeats": 1}, "read": {"patterns": ["full"]}})
    proc = iotune(
        "run", spec, "-o", tmp_path / "c", "--workers", "2", "--per-host", "2", "--no-progress"
    )
    assert proc.returncode == 0, proc.stderr
    assert xr.open_dataset(tmp_path / "c/results.nc").attrs["contended"] == "true"


def test_failing_trials_are_recorded_and_the_sweep_goes_on(make_spec, tmp_path):
    import numpy as np

    source = tmp_path / "src.nc"
    xr.Dataset({"v": (("time", "y", "x"), np.ones((4, 8, 8), "int16"))}).to_netcdf(source)
    spec = make_spec(
        {
            "workload": {
                "field": "file",
                "path": str(source),
                "variable": "v",
                "shape": {"time": 4, "y": 8, "x": 8},
            },
            "parameters": {"codec": ["none", "zlib"], "chunks": [4, 8, 8]},
            "measure": {"repeats": 1},
            "execution": {"executor": "dask", "workers": 2},
        }
    )
    # valid when planned, gone when the trials run: a real failure inside every trial
    script = (
        "import os, sys; from iotune.app import api; from iotune.specfile.parse import load_spec\n"
        f"s = load_spec({str(spec)!r}); os.remove({str(source)!r})\n"
        f"api.run(s, out={str(tmp_path / 'o')!r}, progress=False)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    ds = xr.open_dataset(tmp_path / "o/results.nc")
    assert set(ds["status"].values.ravel()) == {"failed"}
    assert all("src.nc" in e or "No such file" in e for e in ds["error"].values.ravel())


def _pid_writing_into(directory: Path, *, spare: set[int]) -> int | None:
    """The process with a trial file open under ``directory``: the worker running the trial.

    Only a ``trial-*`` path counts: the sweep's own process writes the scratch
    owner mark there too, and killing it would test something else.
    """
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) in spare:
            continue
        try:
            for fd in (proc / "fd").iterdir():
                target = str(fd.readlink())
                if target.startswith(str(directory)) and "/trial-" in target:
                    return int(proc.name)
        except OSError:
            continue
    return None


def _kill_trial_worker(scratch: Path, deadline: float, *, sweep: int) -> int:
    while time.monotonic() < deadline:
        pid = _pid_writing_into(scratch, spare={os.getpid(), sweep})
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            return pid
        time.sleep(0.02)
    raise AssertionError("no worker ever opened a file in the scratch directory")


BIG = {
    "workload": {"shape": {"time": 64, "y": 512, "x": 512}},
    "parameters": {"chunks": [16, 128, 128], "codec": ["bzip2", "none"]},
    "read": {"patterns": ["full"]},
    # no probes: the worker killed must be running a trial, not a noise probe
    "measure": {"repeats": 1, "noise_probes": 0},
    "execution": {"executor": "dask", "workers": 2},
}


@pytest.mark.parametrize("kills, status", [(1, "ok"), (2, "failed")])
def test_a_killed_worker_is_retried_once_then_failed(make_spec, tmp_path, kills, status):
    spec = make_spec(BIG)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    cmd = [
        sys.executable,
        "-m",
        "iotune",
        "run",
        str(spec),
        "-o",
        str(tmp_path / "o"),
        "--scratch",
        str(scratch),
        "--no-progress",
    ]
    run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = []
    for _ in range(kills):
        killed.append(_kill_trial_worker(scratch, time.monotonic() + 120, sweep=run.pid))
        time.sleep(1.0)  # let the scheduler notice and reschedule
    _out, err = run.communicate(timeout=600)
    assert (tmp_path / "o/results.nc").exists(), (run.returncode, err)
    ds = xr.open_dataset(tmp_path / "o/results.nc")
    statuses = list(ds["status"].values.ravel())
    assert status in statuses, (statuses, err)
    assert statuses.count("ok") >= 1
    if status == "failed":
        assert "worker process died" in " ".join(ds["error"].values.ravel())
        assert run.returncode == 1
    assert not list(scratch.glob("iotune-scratch-*/trial-*"))


def test_kill_9_of_a_dask_sweep_then_resume(make_spec, tmp_path):
    spec = make_spec(
        SPEC
        | {
            "execution": {"executor": "dask", "workers": 2},
            # whole trials per journal line (interleaved resume: tests/runner/test_schedule.py)
            "measure": {"repeats": 3, "order": "sequential", "noise_probes": 0},
        }
    )
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out), "--no-progress"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    journal = out / "journal.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the whole job: client, scheduler and workers
    proc.wait()
    done = len(journal.read_text().splitlines()) - 1
    assert 1 <= done < 4
    resumed = iotune("run", spec, "-o", out, "--resume", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    ids = [line.split('"id":"')[1][:12] for line in journal.read_text().splitlines()[1:]]
    assert len(ids) == len(set(ids)) == 4


def test_a_cluster_left_without_workers_gets_them_back(make_spec, tmp_path, monkeypatch, caplog):
    """dask closes a nanny whose worker did not start again in time (a busy machine), and
    nothing else restarts it: the sweep would wait for ever.  It starts the workers again."""
    import threading

    import dask

    import iotune
    from iotune.executors import dask_

    monkeypatch.setattr(dask_, "WORKERLESS_REVIVE_S", 1.0)
    monkeypatch.setattr(dask_, "WORKER_CHECK_S", 0.2)
    made: list[dask_.DaskExecutor] = []
    original = dask_.DaskExecutor.__init__

    def recorded(self, **options):
        original(self, **options)
        made.append(self)

    monkeypatch.setattr(dask_.DaskExecutor, "__init__", recorded)
    out = tmp_path / "d"

    def close_the_only_nanny() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            journal = out / "journal.jsonl"
            if made and journal.exists() and len(journal.read_text().splitlines()) > 1:
                cluster = made[0]._cluster
                (nanny,) = cluster.workers.values()
                cluster.sync(nanny.close)
                return
            time.sleep(0.05)

    caplog.set_level(logging.WARNING, logger="iotune")
    closer = threading.Thread(target=close_the_only_nanny, daemon=True)
    closer.start()
    spec = make_spec(SPEC | {"measure": {"repeats": 1, "noise_probes": 0}})
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "0.5s"}):
        ds = iotune.run(spec, out=out, workers=1, progress=False)
    closer.join(timeout=5)
    assert set(ds["status"].values.ravel()) == {"ok"}
    assert any("lost every worker" in r.getMessage() for r in caplog.records)


def _daemonic() -> bool:
    import multiprocessing

    return multiprocessing.current_process().daemon


def test_a_restarted_worker_may_still_start_processes():
    """A worker the nanny starts again (after a death, or a restart) is not daemonic either,
    so a trial with loader workers runs on it (torch's DataLoader would fail: "daemonic
    processes are not allowed to have children"); dask's config is as it was after close."""
    import dask

    from iotune.executors.dask_ import DaskExecutor

    executor = DaskExecutor(workers=1)
    try:
        assert list(executor.client.run(_daemonic).values()) == [False]
        workers = list(executor.client.scheduler_info()["workers"])
        executor.client.restart_workers(workers, timeout=120)
        assert list(executor.client.run(_daemonic).values()) == [False]
    finally:
        executor.close()
    assert dask.config.get("distributed.worker.daemon", default=True) is True
