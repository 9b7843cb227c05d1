"""The icechunk backend: Zarr arrays in an Icechunk repository, each knob applied and read back.

A tiny sweep through the CLI writes real repositories with every knob set, and the
results hold what each repository's configuration and manifests say; the exported
code is run and writes the same repository.  Skips without icechunk (the ``virtual``
extra), unless ``IOTUNE_REQUIRE_ICECHUNK=1``, where that is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

try:
    import icechunk  # noqa: F401
except ImportError as err:
    if os.environ.get("IOTUNE_REQUIRE_ICECHUNK") == "1":
        pytest.fail(f"IOTUNE_REQUIRE_ICECHUNK=1 but icechunk is not installed ({err})")
    pytest.skip(f"icechunk is not installed ({err})", allow_module_level=True)

from iotune.backends.exports_base import Target
from iotune.backends.icechunk import repository
from iotune.backends.icechunk.backend import IcechunkBackend
from iotune.core.errors import VerificationError
from iotune.measuring.data import Field
from iotune.model.spec import Workload

ROOT = Path(__file__).resolve().parents[2]
W = Workload(("time", "y", "x"), (8, 16, 16), "float32")
#: every repository knob at a value that is not Icechunk's default
KNOBS = {
    "manifest_preload": "on",
    "max_concurrent_requests": 16,
    "chunk_cache": 2**20,
}
BASE = {"chunks": "2x8x8", "codec": "zstd", "level": 3, "shuffle": "byte", **KNOBS}


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-W", "ignore", "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def write(path: Path, params: dict) -> dict:
    """Write the workload as a trial does; return what verify reads back."""
    effective, _ = IcechunkBackend.resolve(params, W)
    backend = IcechunkBackend()
    writer = backend.open_writer(path, W, effective)
    for start, slab in Field(W).slabs(4):
        writer.write(start, slab)
    writer.close()
    return backend.verify(path, effective)


def test_a_sweep_applies_every_knob_and_reads_it_back(tmp_path: Path) -> None:
    spec = {
        "version": 1,
        "name": "icechunk",
        "workload": {"shape": {"time": 8, "y": 16, "x": 16}, "dtype": "float32"},
        "backend": "icechunk",
        "parameters": {
            "chunks": [[2, 8, 8]],
            "codec": ["zstd"],
            "level": [3],
            "shuffle": ["byte"],
            "inline_chunk_threshold": [64],
            "manifest_split": [1, 2],
            **{k: [v] for k, v in KNOBS.items()},
        },
        "read": {"patterns": ["full"]},
        "measure": {"repeats": 1, "noise_probes": 0},
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    done = iotune("run", "spec.yaml", "-o", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with xr.open_dataset(tmp_path / "out" / "results.nc") as ds:
        assert set(ds["status"].values.ravel()) == {"ok"}
        points = ds["file_properties"].stack(point=[*ds["file_properties"].dims])
        for point in points:
            stored = json.loads(str(point.values))
            split = int(point["manifest_split"])
            assert stored["inline_chunk_threshold"] == 64
            assert stored["manifest_split"] == split
            assert {k: stored[k] for k in KNOBS} == KNOBS
            assert stored["manifests"] == 4 // split  # four rows of chunks along time
            assert stored["chunk_files"] == 16  # chunks of about 500 bytes: a file each
            assert stored["layout"] == "2x8x8" and "zstd" in stored["compressors"]


def test_verify_catches_a_repository_unlike_the_request(tmp_path: Path) -> None:
    path = tmp_path / "r.icechunk"
    write(path, {**BASE, "manifest_split": 2})
    backend = IcechunkBackend()
    asked = IcechunkBackend.resolve({**BASE, "manifest_split": 2, "chunk_cache": 4096}, W)[0]
    with pytest.raises(VerificationError, match="chunk_cache=1048576"):
        backend.verify(path, asked)
    asked = IcechunkBackend.resolve({**BASE, "manifest_preload": "off"}, W)[0]
    with pytest.raises(VerificationError, match="manifest_preload='on'"):
        backend.verify(path, asked)
    asked = IcechunkBackend.resolve({**BASE, "codec": "zlib"}, W)[0]
    with pytest.raises(VerificationError, match="compressors"):
        backend.verify(path, asked)


def test_reads_see_the_committed_values_and_a_cold_read_evicts_every_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.icechunk"
    stored = write(path, {**BASE, "inline_chunk_threshold": 0})
    assert repository.history(path) == ["iotune: trial", "Repository initialized"]
    backend = IcechunkBackend()
    reader = backend.open_reader(path, W, IcechunkBackend.resolve(BASE, W)[0])
    try:
        np.testing.assert_array_equal(reader.read((slice(None),) * 3), Field(W).slab(0, 8))
    finally:
        reader.close()
    folders = {p.relative_to(path).parts[0] for p in backend.paths(path)}
    assert {"chunks", "manifests", "snapshots", "refs"} <= folders
    assert stored["chunk_files"] == len(list((path / "chunks").iterdir())) == 16
    ds = backend.open_dataset(path, {}, chunks=None)
    assert ds["data"].dims == W.dims
    ds.close()


def test_chunks_under_the_inline_threshold_live_in_the_manifest(tmp_path: Path) -> None:
    stored = write(tmp_path / "r.icechunk", {**BASE, "inline_chunk_threshold": 60 * 1024})
    assert stored["chunk_files"] == 0 and stored["inline_chunk_threshold"] == 60 * 1024
    assert not list((tmp_path / "r.icechunk" / "chunks").glob("*"))


def test_guess_can_open_knows_a_repository_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "r.icechunk"
    write(path, dict(BASE))
    xr.Dataset({"a": ("x", np.arange(3))}).to_zarr(tmp_path / "plain.zarr", zarr_format=3)
    (tmp_path / "f.nc").write_bytes(b"CDF")
    assert IcechunkBackend.guess_can_open(path)
    assert not IcechunkBackend.guess_can_open(tmp_path / "plain.zarr")
    assert not IcechunkBackend.guess_can_open(tmp_path / "f.nc")
    assert not IcechunkBackend.guess_can_open(tmp_path / "missing")


@pytest.mark.parametrize(
    "settings",
    [
        {**BASE, "inline_chunk_threshold": 64, "manifest_split": 2},
        {"chunks": "2x8x8", "shards": "4x16x16", "codec": "zlib", "manifest_preload": "off"},
    ],
    ids=["every-knob", "shards"],
)
def test_the_exported_code_writes_the_same_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: dict
) -> None:
    effective = IcechunkBackend.resolve(settings, W)[0]
    target = Target("tas", W.dims, W.shape, W.dtype)
    text = IcechunkBackend.exports(effective, target)["icechunk"]["text"]
    values = Field(W).slab(0, 8)
    monkeypatch.chdir(tmp_path)
    scope: dict = {"values": values}
    exec(compile(text, "export", "exec"), scope)  # the code as a user pastes it
    np.testing.assert_array_equal(scope["tas"][...], values)
    config = repository.read_config(tmp_path / "tas.icechunk")
    assert {k: v for k, v in config.items() if v is not None} == {
        k: effective[k] for k in repository.CONFIG_KNOBS if effective[k] is not None
    }
    # what the exported code wrote passes the backend's own verification
    assert scope["tas"].chunks == (2, 8, 8)
    assert scope["tas"].shards == (None if "shards" not in settings else (4, 16, 16))


def test_a_knob_value_not_allowed_is_one_line_and_exit_2(tmp_path: Path) -> None:
    spec = {
        "version": 1,
        "name": "bad",
        "workload": {"shape": {"time": 8, "y": 16, "x": 16}},
        "backend": "icechunk",
        "parameters": {"manifest_preload": ["sometimes"]},
        "read": {"patterns": ["full"]},
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    done = iotune("run", "spec.yaml", "-o", "out", cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "manifest_preload" in line and "sometimes" in line and "on" in line
    assert not (tmp_path / "out").exists()
