"""``iotune run`` refuses, before it creates anything, what cannot work; ``iotune clean``.

Real commands in subprocesses on real file systems: a sweep far larger than the disk,
an output that is a file, read-only tmpfs mounts, scratch left by killed runs.
"""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from iotune.runner.scratch import OWNER_FILE, SCRATCH_PREFIX
from tests.test_cli_errors import assert_usage_error

MiB = 2**20
#: 100000 x 4000 x 4000 float64: 11.6 TiB
HUGE = {"shape": {"time": 100000, "y": 4000, "x": 4000}, "dtype": "float64"}
#: SMALL with one trial of 128 KiB, measured once
ONE_TRIAL = {"measure": {"repeats": 1}, "parameters": {"chunks": [16, 16, 16], "codec": "none"}}


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


def tree(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


@pytest.fixture
def spec_file(tmp_path, small_spec):
    """The factory ``spec_file(changes) -> Path``: SMALL with changes, written beside."""

    def write(changes: dict | None = None) -> Path:
        path = tmp_path / "spec.yaml"
        path.write_text(yaml.safe_dump(small_spec(changes), sort_keys=False))
        return path

    return write


@pytest.mark.parametrize("backend", ["posix", "netcdf4"])
@pytest.mark.parametrize("with_out", [True, False], ids=["-o", "default-out"])
def test_a_sweep_larger_than_the_disk_is_refused_at_once(tmp_path, backend, with_out):
    spec = tmp_path / "huge.yaml"
    huge = {"version": 1, "name": "huge", "workload": HUGE, "backend": backend}
    spec.write_text(yaml.safe_dump({**huge, "parameters": {"concurrency": 1}}))
    before = tree(tmp_path)
    args = ("-o", tmp_path / "out") if with_out else ()
    start = time.perf_counter()
    proc = iotune("run", spec, *args, "--no-progress", cwd=tmp_path)
    took = time.perf_counter() - start
    line = assert_usage_error(proc, f"trial {backend} ", "needs 12.2TiB on ", " free; --force")
    # at once: before any write (the sweep would run for hours); the bound is loose enough
    # for a CLI start beside another pytest worker on a busy 2-core machine
    assert took < 5.0, f"{took:.2f} s: {line}"
    assert tree(tmp_path) == before  # no output directory, no scratch, no journal


def test_force_runs_a_sweep_the_check_refuses(tmpfs, tmp_path, spec_file):
    """An 8 MiB tmpfs: a 128 KiB trial fits, but the 16 MiB allowance per file does not."""
    scratch = tmpfs("8m")
    spec = spec_file(ONE_TRIAL)
    out = tmp_path / "out"
    refused = iotune("run", spec, "-o", out, "--scratch", scratch, cwd=tmp_path)
    assert_usage_error(refused, f"on {scratch} (tmpfs), 8MiB free", "--force runs it anyway")
    assert not out.exists()
    forced = iotune("run", spec, "-o", out, "--scratch", scratch, "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert (out / "results.nc").exists()
    assert list(scratch.iterdir()) == []


def test_output_that_is_a_file_is_refused_and_kept(tmp_path, minimal_path):
    mine = tmp_path / "results.nc"
    mine.write_text("my results")
    proc = iotune("run", minimal_path, "-o", mine, cwd=tmp_path)
    assert_usage_error(proc, f"-o {mine}: exists and is not a directory")
    inside = iotune("run", minimal_path, "-o", mine / "sub", cwd=tmp_path)
    assert_usage_error(inside, f"-o {mine / 'sub'}: {mine} exists and is not a directory")
    assert tree(tmp_path) == ["results.nc"] and mine.read_text() == "my results"


def test_scratch_that_does_not_exist_is_refused_before_the_output_is_made(tmp_path, minimal_path):
    proc = iotune("run", minimal_path, "-o", tmp_path / "out", "--scratch", "nope", cwd=tmp_path)
    assert_usage_error(proc, "--scratch nope: not an existing directory")
    assert tree(tmp_path) == []


@pytest.mark.parametrize("where", ["inside", "itself"])
def test_output_on_a_read_only_file_system_is_refused(tmpfs, tmp_path, minimal_path, where):
    readonly = tmpfs("1m", readonly=True)
    out = readonly / "out" if where == "inside" else readonly
    proc = iotune("run", minimal_path, "-o", out, cwd=tmp_path)
    assert_usage_error(proc, f"-o {out}: {readonly} (tmpfs) is mounted read-only")
    assert tree(tmp_path) == ["tmpfs"]


def test_scratch_on_a_read_only_file_system_is_refused(tmpfs, tmp_path, minimal_path):
    readonly = tmpfs("1m", readonly=True)
    out = tmp_path / "out"
    proc = iotune("run", minimal_path, "-o", out, "--scratch", readonly, cwd=tmp_path)
    assert_usage_error(proc, f"--scratch {readonly}: {readonly} (tmpfs) is mounted read-only")
    assert tree(tmp_path) == ["tmpfs"]


# --- scratch left by killed runs --------------------------------------------------------


def dead_pid() -> int:
    """The pid of a process that has ended (started and waited for here)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def scratch_of(parent: Path, name: str, *, pid: int, host: str | None = None) -> Path:
    """A scratch directory as a run makes it, with 1 MiB of data and its owner mark."""
    path = parent / f"{SCRATCH_PREFIX}{name}"
    (path / "trial-0123").mkdir(parents=True)
    (path / "trial-0123" / "r0.nc").write_bytes(b"\1" * MiB)
    (path / OWNER_FILE).write_text(f"{host or socket.gethostname()} {pid}\n")
    return path


def test_clean_removes_only_what_killed_runs_left(tmp_path):
    out, scratch = tmp_path / "out", tmp_path / "scratch"
    out.mkdir()
    scratch.mkdir()
    pid = dead_pid()
    killed = scratch_of(scratch, "killed", pid=pid)
    killed_in_out = scratch_of(out, "killed", pid=pid)
    running = scratch_of(scratch, "running", pid=os.getpid())
    scratch_of(scratch, "remote", pid=pid, host="another-node")
    (scratch / f"{SCRATCH_PREFIX}unmarked").mkdir()
    (out / ".iotune.lock").write_text(str(pid))
    proc = iotune("clean", out, "--scratch", scratch, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    for path in (killed, killed_in_out):
        assert f"removed scratch left by an earlier run (pid {pid}, 1MiB): {path}" in lines
        assert not path.exists()
    assert f"kept scratch of a running iotune (pid {os.getpid()}, 1MiB): {running}" in lines
    assert any(line.startswith(f"kept scratch of pid {pid} on host another-node") for line in lines)
    assert f"removed the lock of a run that was killed (pid {pid}): {out / '.iotune.lock'}" in lines
    assert "nothing to clean" not in lines
    assert len(lines) == 6, lines  # and one for the unmarked directory, which stays
    assert sorted(p.name for p in scratch.iterdir()) == [
        f"{SCRATCH_PREFIX}{name}" for name in ("remote", "running", "unmarked")
    ]
    assert list(out.iterdir()) == []

    again = iotune("clean", out, "--scratch", scratch, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1] == "nothing to clean"


def test_clean_leaves_the_lock_of_a_running_sweep(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with (out / ".iotune.lock").open("a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        proc = iotune("clean", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "nothing to clean\n"
    assert (out / ".iotune.lock").exists()


def test_clean_needs_an_existing_output_directory(tmp_path):
    assert_usage_error(iotune("clean", tmp_path / "nope", cwd=tmp_path), "not an existing dir")


@pytest.mark.slow
def test_a_run_says_which_scratch_of_an_earlier_run_it_removed(tmp_path, spec_file):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    pid = dead_pid()
    killed = scratch_of(scratch, "killed", pid=pid)
    running = scratch_of(scratch, "running", pid=os.getpid())
    spec = spec_file(ONE_TRIAL)
    out = tmp_path / "out"
    proc = iotune("run", spec, "-o", out, "--scratch", scratch, "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    said = f"iotune: removed scratch left by an earlier run (pid {pid}, 1MiB): {killed}"
    assert said in proc.stderr.splitlines(), proc.stderr
    assert proc.stderr.count("removed scratch") == 1  # not the running sweep's
    assert not killed.exists() and running.exists()
