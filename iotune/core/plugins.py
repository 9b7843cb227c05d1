"""Plugins: formats and executors found through entry points, as xarray finds its backends.

A package declares ``[project.entry-points."iotune.backends"] NAME = "module:Class"``
(or ``"iotune.executors"``).  iotune's own are listed in code, so a source
checkout works without installed metadata; a plugin may not take a built-in's
name (it is ignored with a :class:`~iotune.core.errors.PluginWarning`).  Nothing is
imported until a name is used.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from collections.abc import Mapping
from typing import Any

from iotune.core.errors import PluginWarning, UsageError

GROUPS = ("iotune.backends", "iotune.executors")
#: iotune's own executors (here, below the spec parser that checks the names)
EXECUTORS: dict[str, str] = {
    "serial": "iotune.executors.serial:SerialExecutor",
    "dask": "iotune.executors.dask_:DaskExecutor",
}


def executor_names() -> tuple[str, ...]:
    """Names of every registered executor: the built-ins, then installed plugins."""
    return tuple(registry("iotune.executors", EXECUTORS))


@functools.cache
def _installed(group: str) -> tuple[tuple[str, str, str], ...]:
    """``(name, "module:attr", distribution)`` of every entry point in ``group``."""
    from importlib.metadata import entry_points

    found = []
    for ep in entry_points(group=group):
        dist = ep.dist.name if ep.dist is not None else "?"
        found.append((ep.name, ep.value, dist))
    return tuple(found)


def registry(group: str, builtins: Mapping[str, str]) -> dict[str, str]:
    """The built-ins of ``group`` and the installed plugins, ``{name: "module:attr"}``."""
    table = dict(builtins)
    for name, value, dist in _installed(group):
        if name in builtins:
            # iotune's own entry points repeat the built-ins; an editable install's metadata
            # may name where a built-in lived before an upgrade, and the code's table wins
            if dist != "iotune" and value != builtins[name]:
                message = f"{dist} registers {group} {name!r}, a built-in name; it is ignored"
                warnings.warn(message, PluginWarning, stacklevel=2)
            continue
        table[name] = value
    return table


def load(group: str, name: str, builtins: Mapping[str, str]) -> Any:
    """Import and return the object ``name`` stands for: a built-in, else a plugin.

    A built-in name never reads the installed metadata (about 45 ms a process).

    Raises
    ------
    UsageError
        ``name`` is unknown (the message lists the valid names), or its plugin
        does not import.
    """
    kind = group.rsplit(".", 1)[-1].rstrip("s")
    table = builtins if name in builtins else registry(group, builtins)
    try:
        target = table[name]
    except KeyError:
        raise UsageError(f"unknown {kind} {name!r}; allowed: {', '.join(table)}") from None
    module_name, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as err:
        raise UsageError(f"{kind} {name!r} ({target}) cannot be loaded: {err}") from err


def named(target: str) -> Any:
    """The object ``"module:attr"`` names, its module imported now (a backend's own pieces:
    its target writer, its library's default chunks)."""
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)
