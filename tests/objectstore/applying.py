"""Helpers of the ``iotune apply`` tests on object stores: open, compare, list, run the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import xarray as xr

from tests.convert.test_convert import CF_KEYS

ROOT = Path(__file__).resolve().parents[2]
#: few chunks: each is a request, and the servers started by the tests are slow at them
SETTINGS = "chunks=20x16x12 codec=zstd level=3"


def open_store(url: str, *, decode: bool = True) -> xr.Dataset:
    """A Zarr store on an object store, loaded, through the clients iotune uses."""
    from iotune.convert.stores import Location

    where = Location.of(url, flag="test")
    try:
        store = where.zarr_store(read_only=True)
        with xr.open_zarr(store, consolidated=False, decode_cf=decode) as ds:
            return ds.load()
    finally:
        where.close()


def assert_same_data(source: Path, target: str) -> None:
    """Decoded values, coordinates, attributes and CF encodings of ``target`` are the source's."""
    with xr.open_dataset(source) as ds:
        before = ds.load()
    after = open_store(target)
    xr.testing.assert_identical(before, after)
    for name, var in before.variables.items():
        for key in CF_KEYS:
            assert var.encoding.get(key) == after[name].encoding.get(key), (name, key)
    packed = open_store(target, decode=False)
    assert packed["tas"].dtype == np.int16 and int(packed["tas"][0, 0, 0]) == -999


def stored_chunks(url: str, name: str) -> tuple[tuple[int, ...], list[str]]:
    """A variable's chunks and codec names as the store says (read back with zarr)."""
    import zarr

    from iotune.convert.stores import Location

    where = Location.of(url, flag="test")
    try:
        array = zarr.open_array(where.zarr_store(read_only=True), path=name, mode="r")
        return tuple(array.chunks), [type(c).__name__ for c in array.compressors]
    finally:
        where.close()


def run_cli(*args: str, env: dict[str, str], delay: float = 0.0) -> subprocess.Popen[str]:
    """``iotune apply ARGS`` in a new process with ``env`` added (IOTUNE_APPLY_REGION_DELAY)."""
    extra = {"PYTHONPATH": str(ROOT), "IOTUNE_APPLY_REGION_DELAY": str(delay)}
    command = [sys.executable, "-W", "ignore", "-m", "iotune", "apply", *args]
    return subprocess.Popen(
        command,
        env=os.environ | env | extra,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
