"""torch's DataLoader over the exported Dataset: the class recommend exports, read as a user reads.

The trial's file is real (the backend writes it as a sweep's trial does); torch is
real too, and the tests skip without it (fail with ``IOTUNE_REQUIRE_TORCH=1``).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

from iotune.backends import get_backend
from iotune.measuring.data import Field
from iotune.model.records import Trial, TrialResult, TrialTask
from iotune.model.spec import BatchSpec, MeasureSpec, ReadSpec, Workload
from iotune.runner import loader, placed, steps, torch_loader

WORKLOAD = Workload(("time", "y", "x"), (64, 8, 8), seed=5)


def trial(backend: str, tmp_path: Path, spec: BatchSpec, **knobs) -> tuple[TrialTask, Path]:
    """A written trial file of ``backend`` and the task that reads it."""
    cls = get_backend(backend)
    params, _ = cls.resolve({"chunks": (1, 8, 8)}, WORKLOAD)
    read = ReadSpec(("batches",), batches=spec)
    task = TrialTask(Trial("t", backend, params | knobs), WORKLOAD, read, MeasureSpec(), "")
    path = tmp_path / f"data{cls.suffix}"
    steps.write_once(task, placed.make_backend(task), path, TrialResult("t", "ok"))  # type: ignore[arg-type]
    return task, path


@pytest.mark.parametrize(("backend", "workers"), [("netcdf4", 0), ("zarr", 2)])
def test_the_torch_loader_reads_the_batches_with_the_exported_class(
    torch_module, backend, workers, tmp_path
) -> None:
    from iotune.analysis.exports import all_exports
    from iotune.backends.exports_base import Target

    spec = BatchSpec((("time", 1),), batch=4, batches=6)
    task, path = trial(backend, tmp_path, spec, num_workers=workers, prefetch_factor=2)
    assert torch_loader.loader_of(task) == "torch"
    entry = loader.read_batches(task, placed.make_backend(task), path)  # type: ignore[arg-type]
    assert entry["loader"] == "torch"
    assert entry["ops"] == 24 and entry["bytes"] == 24 * 8 * 8 * 2  # int16 samples
    assert 0 < entry["first_batch_s"] < entry["s"] and entry["samples_per_s"] > 0
    # the class the DataLoader iterated is the text recommend exports, not a copy
    cls = torch_loader.exported_dataset(task, spec)
    target = Target("data", WORKLOAD.dims, WORKLOAD.shape, WORKLOAD.dtype)
    point = {"backend": backend, "chunks": "1x8x8", "num_workers": workers}
    exported = all_exports(point, target, batches=spec.to_dict())["torch_dataset"]["text"]
    assert inspect.getsource(sys.modules[cls.__module__]) == exported
    data = Field(WORKLOAD).slab(0, WORKLOAD.shape[0])
    assert np.array_equal(cls(str(path))[3], data[3:4])


def test_a_step_is_computed_per_batch_and_its_utilisation_recorded(torch_module, tmp_path):
    spec = BatchSpec((("time", 1),), batch=2, batches=5, loader="torch", step=0.03)
    task, path = trial("netcdf4", tmp_path, spec, num_workers=0)
    entry = loader.read_batches(task, placed.make_backend(task), path)  # type: ignore[arg-type]
    assert entry["s"] >= 5 * 0.03
    assert 0.5 < entry["utilisation"] <= 1.0


def test_auto_is_iotunes_loader_without_torch(tmp_path, monkeypatch) -> None:
    spec = BatchSpec((("time", 1),), batch=2, batches=3)
    task, path = trial("netcdf4", tmp_path, spec, num_workers=0)
    monkeypatch.setitem(sys.modules, "torch", None)  # as where torch is not installed
    assert torch_loader.loader_of(task) == "iotune"
    entry = loader.read_batches(task, placed.make_backend(task), path)  # type: ignore[arg-type]
    assert entry["loader"] == "iotune" and entry["ops"] == 6


def test_a_format_without_a_dataset_export_is_read_by_iotunes_loader(tmp_path) -> None:
    spec = BatchSpec((("time", 1),), batch=2, batches=3)
    task, _ = trial("posix", tmp_path, spec, num_workers=0)
    assert torch_loader.loader_of(task) == "iotune"


def _read_in_daemon(task: TrialTask, path: Path, said) -> None:
    try:
        loader.read_batches(task, placed.make_backend(task), path)  # type: ignore[arg-type]
        said.put("read")
    except Exception as err:
        said.put(f"{type(err).__name__}: {err}")


def test_workers_asked_of_a_daemonic_process_fail_with_the_reason(torch_module, tmp_path):
    """As in a dask worker started daemonic: torch's DataLoader would fail at its first
    worker ("daemonic processes are not allowed to have children"); the trial says why."""
    import multiprocessing

    spec = BatchSpec((("time", 1),), batch=4, batches=2, loader="torch")
    task, path = trial("netcdf4", tmp_path, spec, num_workers=2, prefetch_factor=2)
    context = multiprocessing.get_context("fork")
    said = context.Queue()
    child = context.Process(target=_read_in_daemon, args=(task, path, said), daemon=True)
    child.start()
    found = said.get(timeout=120)
    child.join(timeout=30)
    assert found.startswith("LoaderError: num_workers 2 needs a trial process that may start")
    assert "daemonic (dask: set distributed.worker.daemon to false)" in found
