"""A third-party format plugs in through the ``iotune.backends`` entry point group.

The fixture package (tests/fixtures/plugin) is installed for real with pip into a
folder put on PYTHONPATH, then a sweep runs with its backend from the CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iotune.core.errors import UsageError
from iotune.core.plugins import EXECUTORS, executor_names, load

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "tests" / "fixtures" / "plugin"
SPEC = """\
version: 1
name: plugged
workload: {shape: {time: 8, y: 32, x: 32}}
backend: [rawcopy, posix]
parameters: {transfer_size: 64KiB}
read: {patterns: [full, spatial]}
measure: {repeats: 2}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the installed plugin (its code and its entry points)."""
    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("src") / "plugin"
    shutil.copytree(PLUGIN, source)  # setuptools writes build files beside the source
    pip = [sys.executable, "-m", "pip", "install", "--no-deps", "-q"]
    subprocess.run([*pip, "--target", str(target), str(source)], check=True)
    return target


def _iotune(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    command = [sys.executable, "-m", "iotune", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_a_plugin_format_is_listed_and_sweeps(site: Path, tmp_path: Path) -> None:
    listed = _iotune(site, "backends", "--format", "json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    names = [b["name"] for b in json.loads(listed.stdout)["backends"]]
    assert names[-1] == "rawcopy" and names.count("posix") == 1
    assert "iotune-rawcopy registers iotune.backends 'posix', a built-in name" in listed.stderr

    (tmp_path / "spec.yaml").write_text(SPEC)
    done = _iotune(site, "run", "spec.yaml", "-o", "out", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = _iotune(site, "show", "out", "--format", "json", cwd=tmp_path)
    result = json.loads(shown.stdout)
    assert result["counts"] == {"ok": 2}
    plugged = next(p for p in result["points"] if p["backend"] == "rawcopy")
    assert plugged["write"] > 0 and plugged["read:spatial"] > 0

    # the plugin's recommendation carries the plugin's own exports
    (tmp_path / "alone.yaml").write_text(
        SPEC.replace("[rawcopy, posix]", "rawcopy").replace("{transfer_size: 64KiB}", "{}")
    )
    done = _iotune(site, "run", "alone.yaml", "-o", "alone", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rec = _iotune(site, "recommend", "alone", "--format", "json", cwd=tmp_path)
    assert rec.returncode == 0, rec.stderr
    exports = json.loads(rec.stdout)["exports"]
    assert list(exports) == ["rawcopy_load"]
    assert "np.load(p) for p in sorted" in exports["rawcopy_load"]["text"]
    text = _iotune(site, "recommend", "alone", cwd=tmp_path)
    assert "rawcopy_load:" in text.stdout and "data = np.concatenate(" in text.stdout


def test_an_unknown_name_lists_the_registered_ones() -> None:
    with pytest.raises(UsageError, match=r"unknown executor 'slurm'; allowed: serial, dask"):
        load("iotune.executors", "slurm", EXECUTORS)
    assert executor_names()[:2] == ("serial", "dask")


def test_a_plugin_that_does_not_import_is_one_line() -> None:
    table = {"broken": "iotune_no_such_module:Backend"}
    with pytest.raises(UsageError, match=r"backend 'broken' \(iotune_no_such_module:Backend\)"):
        load("iotune.backends", "broken", table)
