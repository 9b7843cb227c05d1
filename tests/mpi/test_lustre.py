"""Lustre detection and lfs setstripe/getstripe against a fake lfs."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

from iotune.core.errors import LustreError, StripingWarning
from iotune.mpi import lustre

FAKE_LFS = Path(__file__).parents[1] / "fixtures" / "fake-lfs"

# the forms shown in the Lustre tuning slides (seed 004)
DIR_OUTPUT = "stripecount4size8m\nstripe_count:   4 stripe_size:    8388608 stripe_offset:  -1\n"
FILE_OUTPUT = """./file1
lmm_stripe_count:   4
lmm_stripe_size:    8388608
lmm_pattern:        1
lmm_layout_gen:     0
lmm_stripe_offset:  20

obdidx objid objid group
20        39462252      0x25a256c                0
"""


@pytest.fixture
def fake_lfs(tmp_path, monkeypatch):
    bin_dir, state = tmp_path / "bin", tmp_path / "lfs-state"
    bin_dir.mkdir()
    (bin_dir / "lfs").symlink_to(FAKE_LFS)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LFS_DIR", str(state))

    def calls():
        log = state / "calls.jsonl"
        return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []

    return calls


@pytest.mark.parametrize("text", [DIR_OUTPUT, FILE_OUTPUT])
def test_getstripe_output_of_directories_and_files_parses(text):
    got = lustre.parse_getstripe(text)
    assert got["stripe_count"] == 4 and got["stripe_size"] == 8388608


def test_getstripe_output_without_a_count_is_an_error():
    with pytest.raises(LustreError, match="cannot read a stripe count"):
        lustre.parse_getstripe("lfs: something else\n")


def test_fs_type_is_detected_with_statfs_and_can_be_overridden(tmp_path, monkeypatch):
    monkeypatch.delenv(lustre.ENV_FS_TYPE, raising=False)
    detected = lustre.fs_type(tmp_path)
    assert detected and detected != "lustre"
    assert lustre.fs_type(tmp_path, override="lustre") == "lustre"
    monkeypatch.setenv(lustre.ENV_FS_TYPE, "lustre")
    assert lustre.fs_type(tmp_path) == "lustre"
    assert lustre.MAGIC_NAMES[lustre.LUSTRE_MAGIC] == "lustre"


def test_prepare_stripes_a_fresh_empty_directory_before_any_file(tmp_path, fake_lfs):
    target = tmp_path / "trial" / "data"
    info = lustre.prepare(target, count=8, size=4 * 2**20, fs="lustre")
    assert info["applied"] and info["requested"] == {"stripe_count": 8, "stripe_size": 4 * 2**20}
    (call,) = fake_lfs()
    assert call["argv"] == ["setstripe", "-c", "8", "-S", str(4 * 2**20), str(target)]
    assert call["target"]["entries"] == []
    (target / "f.dat").write_bytes(b"x" * 10)
    assert lustre.getstripe(target / "f.dat")["stripe_count"] == 8  # inherited from the dir


def test_lfs_refusals_are_reported_with_its_message(tmp_path, fake_lfs):
    with pytest.raises(LustreError, match="multiple of 65536"):
        lustre.setstripe(tmp_path, count=2, size=1000)


def test_elsewhere_nothing_runs_and_it_is_said_once(tmp_path, fake_lfs):
    lustre._warned.discard("xfs")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")  # count what iotune says, not what Python would hide
        for i in range(3):
            info = lustre.prepare(tmp_path / f"d{i}", count=4, size=None, fs="xfs")
            assert not info["applied"] and info["fs_type"] == "xfs"
    assert fake_lfs() == []
    (warning,) = said  # a StripingWarning, so a notebook can filter it
    assert issubclass(warning.category, StripingWarning)
    assert "not applied: the scratch file system is xfs" in str(warning.message)


def test_without_stripe_settings_nothing_is_requested(tmp_path, fake_lfs):
    info = lustre.prepare(tmp_path / "d", count=None, size=None, fs="lustre")
    assert info == {"fs_type": "lustre", "requested": {}, "applied": False}
    assert fake_lfs() == []


def test_lustre_without_lfs_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LustreError, match="'lfs' is not on PATH"):
        lustre.prepare(tmp_path / "d", count=2, size=None, fs="lustre")
