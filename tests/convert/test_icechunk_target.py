"""``iotune apply`` into an Icechunk repository: a commit per region, killed and resumed.

A CF netCDF file is rewritten through the CLI into a repository with the layout's
chunks, codec and repository configuration; killed with SIGKILL half-way, ``--resume``
finishes it from the branch's last commit, every region written once.  The result
reads back equal to the source with its CF attributes and encodings, and the
branch's history is the conversion.  Skips without icechunk, unless
``IOTUNE_REQUIRE_ICECHUNK=1``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

try:
    import icechunk
except ImportError as err:
    if os.environ.get("IOTUNE_REQUIRE_ICECHUNK") == "1":
        pytest.fail(f"IOTUNE_REQUIRE_ICECHUNK=1 but icechunk is not installed ({err})")
    pytest.skip(f"icechunk is not installed ({err})", allow_module_level=True)

from iotune.backends.icechunk import repository
from iotune.backends.icechunk.target import IcechunkTarget
from tests.convert.conftest import make_cf_source
from tests.convert.test_convert import CF_KEYS

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = "backend=icechunk chunks=4x8x8 codec=zstd inline_chunk_threshold=64 manifest_split=4"


def apply(*args: str | Path, delay: float = 0.0, cwd: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IOTUNE_APPLY_REGION_DELAY": str(delay)}
    command = [sys.executable, "-W", "ignore", "-m", "iotune", "apply", *map(str, args)]
    return subprocess.Popen(
        command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd
    )


def written(journal: Path) -> list[int]:
    if not journal.exists():
        return []
    lines = journal.read_text().splitlines()[1:]
    entries = [json.loads(line) for line in lines if line.endswith("}")]
    return [e["written"] for e in entries if "written" in e]


def opened(path: Path) -> xr.Dataset:
    """The repository's branch through a read-only session, decoded as a user opens it."""
    repo = icechunk.Repository.open(icechunk.local_filesystem_storage(str(path)))
    store = repo.readonly_session("main").store
    return xr.open_zarr(store, consolidated=False).load()


def test_killed_half_way_the_conversion_resumes_from_the_last_commit(tmp_path: Path) -> None:
    source = make_cf_source(tmp_path / "source.nc", time=32)
    target = tmp_path / "out.icechunk"
    partial = target.with_name(target.name + ".iotune-partial")
    journal = target.with_name(target.name + ".iotune-journal")
    options = ["--settings", SETTINGS, "--max-mem", "60KB", "--no-measure"]
    killed = apply(*options, source, "-o", target, delay=0.1)
    deadline = time.monotonic() + 60
    while len(written(journal)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    before = written(journal)
    assert len(before) >= 3 and not target.exists() and partial.is_dir()
    # every region the journal names is committed: the journal follows the commit
    committed = [m for m in repository.history(partial) if m.startswith("iotune apply: rows")]
    assert len(committed) >= len(before)

    again = apply(*options, "--resume", "--verify", "full", source, "-o", target)
    assert again.wait(120) == 0, again.stderr.read()  # type: ignore[union-attr]
    after = written(journal)
    assert len(before) < len(after) and sorted(after) == list(range(len(after)))
    assert after[: len(before)] == before  # none written twice

    with xr.open_dataset(source) as ds:
        src = ds.load()
    got = opened(target)
    xr.testing.assert_identical(src, got)
    for name, var in src.variables.items():
        for key in CF_KEYS:
            assert var.encoding.get(key) == got[name].encoding.get(key), (name, key)

    history = repository.history(target)
    rows = [m for m in history if m.startswith("iotune apply: rows")]
    assert len(rows) >= len(after)  # one commit per region (one more if killed between)
    assert rows[0] == f"iotune apply: rows {32 - 32 // len(after)}:32"  # the last region
    assert history[-2:] == ["iotune apply: metadata", "Repository initialized"]

    found = IcechunkTarget.read_back(target, "tas")
    assert found["chunks"] == "4x8x8" and found["codec"] == "zstd"
    assert found["inline_chunk_threshold"] == 64 and found["manifest_split"] == 4
    packed = opened_raw(target)
    assert packed.dtype == np.int16 and int(packed[0, 0, 0]) == -999


def opened_raw(path: Path) -> np.ndarray:
    repo = icechunk.Repository.open(icechunk.local_filesystem_storage(str(path)))
    store = repo.readonly_session("main").store
    with xr.open_zarr(store, consolidated=False, decode_cf=False) as ds:
        return ds["tas"].values


def test_an_existing_repository_is_refused_without_overwrite(tmp_path: Path) -> None:
    source = make_cf_source(tmp_path / "source.nc", time=8)
    target = tmp_path / "out.icechunk"
    repository.create(target, {})
    listing = sorted(p.name for p in tmp_path.iterdir())
    done = apply("--settings", SETTINGS, source, "-o", target)
    assert done.wait(60) == 2
    (line,) = done.stderr.read().strip().splitlines()  # type: ignore[union-attr]
    assert str(target) in line and "--overwrite" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == listing  # nothing left behind
    assert repository.history(target) == ["Repository initialized"]


def test_a_target_named_relative_to_the_current_folder(tmp_path: Path) -> None:
    """As a user types it: ``-o tas.icechunk`` (a file at the repository's top once made
    the fsync of its new files fail)."""
    source = make_cf_source(tmp_path / "source.nc", time=8)
    done = apply(
        "--settings", SETTINGS, "--no-measure", "source.nc", "-o", "out.icechunk", cwd=tmp_path
    )
    assert done.wait(60) == 0, done.stderr.read()  # type: ignore[union-attr]
    with xr.open_dataset(source) as before:
        xr.testing.assert_equal(opened(tmp_path / "out.icechunk")["tas"], before["tas"].load())
