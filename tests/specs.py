"""The minimal spec fixture and dotted-path edits of it, for tests of broken specs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

MINIMAL = Path(__file__).parent / "fixtures" / "specs" / "minimal.yaml"
#: a value for ``changed`` that deletes the key instead of setting it
DELETE = object()


def minimal() -> dict[str, Any]:
    """The minimal spec as a fresh dict."""
    return yaml.safe_load(MINIMAL.read_text())


def changed(changes: dict[str, Any]) -> dict[str, Any]:
    """The minimal spec with dotted paths set (or deleted with DELETE)."""
    data = copy.deepcopy(minimal())
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
    return data
