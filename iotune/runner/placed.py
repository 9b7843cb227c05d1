"""The trial's backend, placed on the sweep's object store when it has one.

Its own module so that the trial's steps and the loader workers of the batches
pattern (which :mod:`iotune.runner.steps` imports) share it without a cycle.
"""

from __future__ import annotations

from pathlib import Path

from iotune.backends import get_backend
from iotune.backends.base import Backend
from iotune.backends.object.base import ObjectStoreBackend
from iotune.model.records import TrialTask


def make_backend(task: TrialTask) -> Backend:
    """The trial's backend, bound to the sweep's object store when it has one."""
    backend = get_backend(task.trial.backend)()
    if task.storage is not None and isinstance(backend, ObjectStoreBackend):
        backend.bind(task.storage, Path(task.scratch))
    return backend
