"""The code ``recommend`` prints writes the pick: every knob a target carries, walked.

For every format ``iotune apply`` writes and every knob its target writer carries
(tests/convert/test_knob_roundtrip.py's values), the export a user pastes (netCDF4-python's
``createVariable``, h5py's ``create_dataset``, zarr's ``create_array`` or xarray's Zarr
encoding) is run in a fresh interpreter on a small array, and the target writer's
read-back of the file it made is the knob as asked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from iotune.backends import get_backend
from iotune.backends.exports_base import Target
from tests.convert.test_knob_roundtrip import VALUES, _asked, writers

TARGET = Target("v", ("t", "y", "x"), (8, 8, 8), "float32")
#: the first half zero, zarr's fill value for a float array created without one: chunks
#: (and shards) equal to the fill value, stored or not
DATA = (
    "import numpy as np\ndata = np.arange(512, dtype='f4').reshape(8, 8, 8) + 0.5\ndata[:4] = 0\n"
)
#: how each format's export is pasted and the array written after it
PASTE = {
    "netcdf4": ("netcdf4_create_variable", "out.nc", "var[:] = data\nnc.close()"),
    "h5py": ("h5py_create_dataset", "out.h5", "dset[:] = data\nf.close()"),
    # create_array makes the array at the store's root: the variable's own directory
    "zarr": ("zarr_create_array", "out.zarr/v", "arr[:] = data"),
}
#: writers whose export is a whole script (create, write, commit), run where it is tested
RUN_ELSEWHERE = {"icechunk": "tests/backends/test_icechunk_.py"}
#: knobs whose value the library applies while writing and the file does not keep, so no
#: read-back can tell (their exports are run by tests/analysis/test_file_exports.py)
NOT_IN_THE_FILE = {"alignment", "alignment_threshold", "meta_block_size", "libver"}
#: the settings a Zarr export needs to be a create_array call (it is offered for a shard
#: index or a quantisation; the plain layouts are xarray's encoding, run elsewhere)
ZARR_NEEDS = "shards=4x8x8 shard_index=end"


def cases() -> list[Any]:
    out = []
    for name, writer in writers().items():
        assert name in PASTE or name in RUN_ELSEWHERE, f"how is {name}'s export pasted?"
        if name in RUN_ELSEWHERE:
            continue
        for knob in writer.carried:
            if knob in NOT_IN_THE_FILE:
                continue
            for value, beside in VALUES[knob]:
                if name == "zarr" and knob not in ("shards", "shard_index"):
                    beside = f"{ZARR_NEEDS} {beside}"
                out.append(pytest.param(name, knob, value, beside, id=f"{name}-{knob}={value}"))
    return out


def settings_of(backend: str, text: str) -> dict[str, Any]:
    found: dict[str, Any] = {"backend": backend, "chunks": "4x4x4"}
    for item in text.split():
        key, _, value = item.partition("=")
        found[key] = _asked(key, value)  # typed as a results file holds it
    return found


@pytest.mark.parametrize(("backend", "knob", "value", "beside"), cases())
def test_the_exported_code_writes_the_knob(
    tmp_path: Path, backend: str, knob: str, value: str, beside: str
) -> None:
    if knob == "shards" and value == "8x8x8":
        beside = "shard_index=end"  # the create_array export is offered with an index
    settings = settings_of(backend, f"{beside} {knob}={value}")
    key, name, after = PASTE[backend]
    exported = get_backend(backend).exports(settings, TARGET)
    assert key in exported and "text" in exported[key], (key, exported.get(key))
    config = exported.get("zarr_config", {}).get("text", "")
    pasted = exported[key]["text"].replace(  # the user's file has its dimensions
        "var = nc.createVariable",
        "for dim in ('t', 'y', 'x'):\n    nc.createDimension(dim, 8)\nvar = nc.createVariable",
    )
    code = f"{DATA}path = store = {name!r}\n{config}\n{pasted}\n{after}\n"
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, f"{code}\n{done.stderr}"
    got = writers()[backend].read_back(tmp_path / name.removesuffix("/v"), "v").get(knob)
    assert got == _asked(knob, value), f"{backend} {knob}={value}: read back {got!r}\n{code}"
