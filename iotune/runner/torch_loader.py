"""The ``batches`` pattern read by torch's ``DataLoader`` over the ``Dataset`` recommend exports.

What a user runs, so what iotune measures: the ``Dataset`` class is the text
:func:`iotune.backends.loader_exports.dataset_code` makes for ``recommend``'s
``torch_dataset`` export, loaded as a module of its own (so workers of any
start method can import it), and the ``DataLoader`` gets the arguments of the
``torch_dataloader`` export.  Two arguments are added: the generator, seeded
from the workload's seed so every trial of a sweep shuffles the same way, and
with workers, a fork server that has imported torch and the format's library.
A user's script forks its workers (Linux's default before Python 3.14) from a
process that has not written the file; the trial's process has, and a worker
forked from it after HDF5 wrote there died of a segmentation fault (1 trial in 4
of ``benchmarks/batches_vs_torch.py``).  Forked from the server, a worker starts
from a clean process as quickly as a fork, and the class is found by its module
on the trial's ``sys.path``, which a fork server's child is given.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import multiprocessing
import shutil
import sys
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

from iotune.backends import get_backend
from iotune.backends.exports_base import Target
from iotune.backends.loader_exports import dataloader_arguments, dataset_code
from iotune.backends.xarray_open import VARIABLE
from iotune.core.errors import NotApplicable
from iotune.model.records import TrialTask
from iotune.model.spec import BatchSpec


def loader_of(task: TrialTask) -> str:
    """``torch``, ``iotune`` or ``xbatcher``: who reads the trial's batches.

    ``auto`` is torch where it is importable and the backend has a ``Dataset``
    export, else iotune's loader (the spec refused ``torch`` where it cannot be).
    """
    spec = task.read.batches
    asked = spec.loader if spec is not None else "auto"
    if asked != "auto":
        return asked
    if importlib.util.find_spec("torch") is None:
        return "iotune"
    try:
        get_backend(task.trial.backend).loader_open(target_of(task))
    except NotApplicable:
        return "iotune"
    return "torch"


def target_of(task: TrialTask) -> Target:
    """The trial's array as the exports describe it."""
    w = task.workload
    return Target(VARIABLE, tuple(w.dims), tuple(w.shape), w.dtype)


def exported_dataset(task: TrialTask, spec: BatchSpec) -> type:
    """The exported ``Dataset`` class for the trial's backend, imported from its text."""
    target = target_of(task)
    code = dataset_code(get_backend(task.trial.backend).loader_open(target), target, spec.to_dict())
    name = f"iotune_dataset_{hashlib.sha256(code.encode()).hexdigest()[:12]}"
    if name not in sys.modules:
        folder = tempfile.mkdtemp(prefix="iotune-dataset-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # imported until then
        where = Path(folder) / f"{name}.py"
        where.write_text(code)
        found = importlib.util.spec_from_file_location(name, where)
        assert found is not None and found.loader is not None
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
        sys.modules[name] = module  # pickled by reference when workers are spawned
        sys.path.append(str(where.parent))  # where such workers import it from
    return sys.modules[name].Dataset


def _worker_context(task: TrialTask) -> Any:
    """A fork server with torch and the format's library imported: workers forked from a
    process that has never opened an HDF5 file, as from a user's fresh script."""
    # the start method of iotune's own loader too (runner/loader.py imports this module)
    context: Any = multiprocessing.get_context("forkserver")
    library = get_backend(task.trial.backend).library
    context.set_forkserver_preload(["torch", "torch.utils.data", library])
    return context


def torch_batches(task: TrialTask, path: Path, spec: BatchSpec) -> Generator[int, None, None]:
    """Each batch's bytes, as a loop over the exported ``DataLoader`` takes them.

    torch is imported and the loader made here, untimed (a user's script has done
    both before its loop); iterating starts the workers, timed.  Closing the
    iterator stops them (untimed, after the loop).
    """
    import torch  # type: ignore[import-not-found,unused-ignore]
    from torch.utils.data import DataLoader  # type: ignore[import-not-found,unused-ignore]

    arguments: dict[str, Any] = dataloader_arguments(task.trial.params, spec.to_dict())
    generator = torch.Generator().manual_seed(task.workload.seed)
    dataset = exported_dataset(task, spec)(str(path))
    if arguments["num_workers"]:
        arguments = arguments | {"multiprocessing_context": _worker_context(task)}
    loader = DataLoader(dataset, generator=generator, **arguments)
    return _iterate(loader, spec.device, pinned=bool(arguments.get("pin_memory")))


def _iterate(loader: Any, device: str, *, pinned: bool) -> Generator[int, None, None]:
    import torch  # type: ignore[import-not-found,unused-ignore]

    iterator = iter(loader)
    try:
        for batch in iterator:
            if device == "cuda":  # as a training step's input: on the GPU before it runs
                batch = batch.to("cuda", non_blocking=pinned)
                torch.cuda.synchronize()
            yield batch.element_size() * batch.nelement()
            del batch
    finally:
        # persistent workers live as long as the loader: stop them now, not at collection
        shutdown = getattr(iterator, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()
