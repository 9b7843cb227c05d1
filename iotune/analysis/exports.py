"""A recommended point's exports: asked of the backend that measured it.

Every backend owns the code and commands that configure a program as one of its
points (:meth:`iotune.backends.base.Backend.exports`; the shared pieces are in
:mod:`iotune.backends.exports_base`).  This module only finds the backend of a
point and asks it, so a plugin's recommendation carries the plugin's own exports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends import get_backend
from iotune.backends.exports_base import Target, make_all
from iotune.backends.loader_exports import loader_makers
from iotune.backends.xbatcher_exports import xbatcher_makers
from iotune.core.errors import UsageError
from iotune.model.spec import StorageSpec

__all__ = ["Target", "all_exports"]


def all_exports(
    settings: Mapping[str, Any],
    target: Target,
    *,
    hints: Mapping[str, Any] | None = None,
    storage: StorageSpec | None = None,
    batches: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Every export of the point's backend that applies, keyed by name.

    Each value has ``text`` (to paste) and, for structured exports, ``value``
    (JSON-friendly); an export the settings cannot be expressed in has only
    ``unavailable`` (the reason).  ``settings`` names the backend (``backend``); a
    point without one has no exports, one whose backend is not installed here one
    ``unavailable`` entry saying so.
    ``hints``: the point's MPI-IO hints; ``storage``: the object store the sweep
    measured (:func:`iotune.analysis.points.storage_of`); ``batches``: the sweep's
    ``read.batches`` when it read that pattern, which adds the ``Dataset`` class and
    ``DataLoader`` line (:mod:`iotune.backends.loader_exports`).
    """
    name = settings.get("backend")
    if not name:
        return {}
    try:
        backend = get_backend(str(name))
    except UsageError as err:  # results of a plugin that is not installed here
        return {"exports": {"unavailable": f"{err}; install it to see its exports"}}
    found = backend.exports(settings, target, hints=hints, storage=storage)
    if batches is None:
        return found
    found |= make_all(loader_makers(backend, settings, target, batches))
    if batches.get("loader") == "xbatcher":  # measured through xbatcher: its loop too
        found |= make_all(xbatcher_makers(backend, settings, target, batches, storage=storage))
    return found
