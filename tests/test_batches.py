"""The batches pattern end to end: CLI sweeps, loader processes, and the exported Dataset.

Sweeps run the real command in a session of its own, so every process it
started (trial workers, the fork server, loader workers) can be found in
/proc afterwards, and none may be left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from iotune.measuring.data import Field
from iotune.measuring.samples import Samples
from iotune.model.records import Trial, TrialResult, TrialTask
from iotune.model.spec import BatchSpec, MeasureSpec, ReadSpec, Workload
from iotune.runner import placed, steps

BATCHES = {"sample": {"time": 1}, "batch": 4, "batches": 6, "shuffle": True, "loader": "iotune"}
SWEEP = {
    "version": 1,
    "name": "batches",
    "workload": {"shape": {"time": 32, "y": 32, "x": 32}, "dtype": "int16"},
    "backend": ["netcdf4", "zarr"],
    "parameters": {
        "chunks": [[1, 32, 32], [8, 16, 16]],
        "num_workers": [0, 2],
        "prefetch_factor": [2],
    },
    "read": {"patterns": ["full", "batches"], "batches": BATCHES},
    "measure": {"repeats": 2, "noise_probes": 0},
}


def start(*args: str | Path, cwd: Path) -> subprocess.Popen[str]:
    """``python -m iotune ARGS`` in a session of its own."""
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip


def in_session(sid: int) -> list[int]:
    """Processes still running in session ``sid`` (zombies aside)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # after the command: state, ppid, pgrp, session
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def finished(proc: subprocess.Popen[str]) -> tuple[str, str]:
    out, err = proc.communicate(timeout=600)
    deadline = time.monotonic() + 5  # processes the kernel kills for a dead parent
    while in_session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert in_session(proc.pid) == [], "processes of the sweep outlived it"
    return out, err


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("batches")
    spec = tmp / "spec.yaml"
    spec.write_text(yaml.safe_dump(SWEEP, sort_keys=False))
    proc = start("run", spec, "-o", tmp / "out", cwd=tmp)
    out, err = finished(proc)
    assert proc.returncode == 0, err
    return tmp / "out", out


@pytest.mark.slow
def test_a_batches_sweep_records_samples_per_second_and_first_batch(sweep_run):
    out, stdout = sweep_run
    assert "read:batches" in stdout
    ds = xr.open_dataset(out / "results.nc")
    assert set(ds["status"].values.ravel()) == {"ok"}
    assert list(ds["num_workers"].values) == [0, 2]
    batches = ds.sel(pattern="batches")
    for name in ("read_samples_per_s", "read_first_batch_s", "read_MiBps"):
        assert np.isfinite(batches[name].values).all() and (batches[name].values > 0).all()
    assert np.isnan(ds["read_samples_per_s"].sel(pattern="full").values).all()
    first, total = batches["read_first_batch_s"], batches["read_s"]
    assert (first < total).all()
    # samples/s after the first batch (the steady state): the batches after it arrived
    # between the first and the last, which lies within the read
    samples = BATCHES["batch"] * BATCHES["batches"]
    after = samples - BATCHES["batch"]
    assert (batches["read_samples_per_s"] * (total - first) >= after * 0.999).all()
    assert set(ds["read_loader"].values.ravel()) == {"iotune"}
    assert ds.attrs["provenance_loader"] == "iotune"
    assert np.isnan(batches["read_utilisation"].values).all()  # no step: nothing to keep busy
    assert (batches["read_bytes"] == samples * 32 * 32 * 2).all()
    assert set(batches["read_cache"].values.ravel()) == {"cold"}
    assert json.loads(ds.attrs["batches"]) == BATCHES


@pytest.mark.slow
def test_recommend_exports_the_dataset_and_the_dataloader(sweep_run, tmp_path):
    out, _ = sweep_run
    proc = subprocess.run(
        [sys.executable, "-m", "iotune", "recommend", out, "--objective", "read:batches",
         "--format", "json"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    workers = rec["winner"]["settings"]["num_workers"]
    loader = rec["exports"]["torch_dataloader"]
    expected = {"batch_size": 4, "shuffle": True, "num_workers": workers}
    if workers:
        expected |= {"prefetch_factor": 2, "persistent_workers": True}
    assert loader["value"] == expected
    assert "DataLoader(Dataset(path), batch_size=4, shuffle=True" in loader["text"]
    assert "class Dataset" in rec["exports"]["torch_dataset"]["text"]
    ds = xr.open_dataset(out / "results.nc").sel(pattern="batches", **rec["winner"]["coords"])
    assert rec["batches"] == {
        "samples_per_s": pytest.approx(float(ds["read_samples_per_s"].median())),
        "first_batch_s": pytest.approx(float(ds["read_first_batch_s"].median())),
        "loader": "iotune",
    }


def written(backend: str, settings: dict, workload: Workload, directory: Path) -> Path:
    """A file of ``backend`` as a sweep's trial writes it with ``settings``."""
    from iotune.backends import get_backend

    cls = get_backend(backend)
    params, _ = cls.resolve(settings, workload)
    task = TrialTask(Trial("t", backend, params), workload, ReadSpec(), MeasureSpec(), "")
    backend_ = placed.make_backend(task)
    path = directory / f"data{cls.suffix}"
    steps.write_once(task, backend_, path, TrialResult("t", "ok"))  # type: ignore[arg-type]
    return path


@pytest.mark.parametrize(
    ("backend", "sample"),
    [
        ("netcdf4", {"time": 1}),
        ("zarr", {"time": 1}),
        ("netcdf4", {"time": 4, "y": 16, "x": 8}),
        ("zarr", {"time": 4, "y": 16}),
        ("h5py", {"time": 2}),
    ],
)
def test_the_exported_dataset_reads_the_samples_the_sweep_read(backend, sample, tmp_path):
    from iotune.analysis.exports import all_exports
    from iotune.backends.exports_base import Target

    workload = Workload(("time", "y", "x"), (16, 32, 24), seed=3)
    settings = {"chunks": (4, 16, 8), "num_workers": 2, "prefetch_factor": 3}
    path = written(backend, settings, workload, tmp_path)
    config = {"sample": sample, "batch": 2, "batches": 2, "shuffle": True}
    target = Target("data", workload.dims, workload.shape, workload.dtype)
    # as results hold a point's settings: chunk shapes as labels
    point = {"backend": backend, **settings, "chunks": "4x16x8"}
    found = all_exports(point, target, batches=config)
    namespace: dict = {}
    exec(found["torch_dataset"]["text"], namespace)  # the code a user pastes, without torch
    dataset = namespace["Dataset"](str(path))
    samples = Samples.of(workload, BatchSpec(tuple(sample.items())))
    assert len(dataset) == len(samples)
    data = Field(workload).slab(0, workload.shape[0])
    for i in (0, 1, len(dataset) - 1):
        assert np.array_equal(dataset[i], data[samples.selection(i)])
    with pytest.raises(IndexError):
        dataset[len(dataset)]
    state = dataset.__getstate__()  # what a DataLoader pickles for its workers
    assert state["_array"] is None and state["path"] == str(path)
    assert found["torch_dataloader"]["value"]["num_workers"] == 2


def test_formats_without_a_dataset_export_say_so() -> None:
    from iotune.analysis.exports import all_exports
    from iotune.backends.exports_base import Target

    target = Target("data", ("time", "x"), (8, 8), "int16")
    found = all_exports({"backend": "posix", "num_workers": 0}, target, batches=dict(BATCHES))
    assert "no Dataset export" in found["torch_dataset"]["unavailable"]
    assert found["torch_dataloader"]["value"] == {
        "batch_size": 4,
        "shuffle": True,
        "num_workers": 0,
    }


KILLED = {
    "version": 1,
    "name": "killed",
    # zlib chunks of 64 steps and no chunk cache: every sample decompresses 128 KiB,
    # so the workers read long enough to be caught with the file open
    "workload": {"shape": {"time": 1024, "y": 32, "x": 32}, "dtype": "int16"},
    "backend": "netcdf4",
    "parameters": {
        "chunks": [64, 32, 32],
        "codec": "zlib",
        "level": 1,
        "chunk_cache": "1KiB",
        "num_workers": [0, 2],
        "prefetch_factor": 2,
    },
    "read": {
        "patterns": ["batches"],
        # iotune's own loader: its workers are the fork server's children, found below
        "batches": {"sample": {"time": 1}, "batch": 32, "batches": 32, "loader": "iotune"},
    },
    "measure": {"repeats": 1, "order": "sequential", "noise_probes": 0},
}


def loader_workers(sid: int) -> list[int]:
    """The session's loader workers: forked by the fork server, the data file open."""
    found = []
    for pid in in_session(sid):
        try:
            parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
            forked = "forkserver" in Path(f"/proc/{parent}/cmdline").read_text()
            files = [str(fd.readlink()) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue
        if forked and any(f.endswith(".nc") and "trial-" in f for f in files):
            found.append(pid)
    return found


@pytest.mark.slow
def test_a_worker_killed_mid_batch_fails_its_trial_and_the_sweep_goes_on(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(KILLED, sort_keys=False))
    proc = start("run", spec, "-o", tmp_path / "out", cwd=tmp_path)
    killed: list[int] = []

    def hunt() -> None:
        while proc.poll() is None and not killed:
            for pid in loader_workers(proc.pid):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.002)

    hunter = threading.Thread(target=hunt)
    hunter.start()
    _, err = finished(proc)
    hunter.join()
    assert killed, "no loader worker was seen reading"
    ds = xr.open_dataset(tmp_path / "out" / "results.nc")
    status = dict(zip(ds["num_workers"].values.tolist(), ds["status"].values.tolist(), strict=True))
    assert status == {0: "ok", 2: "failed"}, err
    error = str(ds["error"].sel(num_workers=2).values)
    assert "LoaderError: loader worker" in error and "SIGKILL" in error
    assert f"pid {killed[0]}" in error


@pytest.mark.slow
def test_a_sweep_stopped_mid_batch_leaves_no_loader_process(tmp_path):
    spec = tmp_path / "spec.yaml"
    only_workers = {**KILLED, "parameters": {**KILLED["parameters"], "num_workers": 2}}
    spec.write_text(yaml.safe_dump(only_workers, sort_keys=False))
    proc = start("run", spec, "-o", tmp_path / "out", cwd=tmp_path)
    deadline = time.monotonic() + 120
    while not loader_workers(proc.pid) and proc.poll() is None:
        assert time.monotonic() < deadline, "no loader worker was seen reading"
        time.sleep(0.002)
    proc.send_signal(signal.SIGTERM)
    _, err = finished(proc)  # and no process of the sweep left
    assert proc.returncode == 143, err


@pytest.mark.slow
def test_loader_workers_run_in_trials_on_the_dask_executor(tmp_path):
    on_dask = {
        **SWEEP,
        "backend": "netcdf4",
        "parameters": {"num_workers": [0, 2], "prefetch_factor": 2},
        "read": {"patterns": ["batches"], "batches": BATCHES},
        "measure": {"repeats": 1, "noise_probes": 0},
        "execution": {"executor": "dask", "workers": 1},
    }
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(on_dask, sort_keys=False))
    proc = start("run", spec, "-o", tmp_path / "out", cwd=tmp_path)
    _, err = finished(proc)  # and no process of the sweep left
    assert proc.returncode == 0, err
    ds = xr.open_dataset(tmp_path / "out" / "results.nc")
    assert set(ds["status"].values.ravel()) == {"ok"}, ds["error"].values
