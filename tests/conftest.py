"""Shared fixtures: small sweep specs written to temporary files."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

SMALL = {
    "version": 1,
    "name": "small",
    "workload": {"shape": {"time": 16, "y": 64, "x": 64}, "dtype": "int16"},
    "backend": "netcdf4",
    "parameters": {"chunks": [[16, 16, 16], [1, 64, 64]], "codec": ["none", "zlib"]},
    "read": {"patterns": ["full", "spatial", "timeseries"], "timeseries": {"pixels": 4}},
    "measure": {"repeats": 2},
}


def merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


@pytest.fixture
def make_spec(tmp_path: Path):
    """Write a spec (SMALL updated with ``changes``) and return its path."""

    def make(changes: dict[str, Any] | None = None, *, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(merge(SMALL, changes or {}), sort_keys=False))
        return path

    return make


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory):
    """A device calibration cached on this machine must not leak into the tests."""
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if saved is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = saved
