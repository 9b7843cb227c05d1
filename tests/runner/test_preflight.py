"""The checks before the first trial: a trial's room on scratch, the margin, the refusal.

The arithmetic is checked against hand-computed numbers; the refusals against real
file systems (the test's own, and a tmpfs of known size where one can be mounted).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from iotune.core.errors import UsageError
from iotune.model.records import Trial
from iotune.model.spec import ExecutionSpec, Workload
from iotune.runner import preflight
from iotune.runner.plan import make_plan
from iotune.runner.preflight import FILE_OVERHEAD, GiB, MiB, check, file_bytes, footprint, need
from iotune.runner.scratch import OWNER_FILE, SCRATCH_PREFIX
from iotune.specfile.parse import parse_spec

WORKLOAD = Workload(dims=("time", "y", "x"), shape=(16, 64, 64), dtype="int16")
RAW = 16 * 64 * 64 * 2  # 128 KiB
#: the 11.6 TiB workload of the issue
HUGE = {"time": 100000, "y": 4000, "x": 4000}


def sweep(workload: dict[str, Any], **top: Any):
    shape = workload.pop("shape", {"time": 16, "y": 64, "x": 64})
    return parse_spec({"version": 1, "workload": {"shape": shape, **workload}, **top})


def test_a_file_counts_its_raw_bytes_plus_five_percent_and_16_mib():
    assert file_bytes(0) == FILE_OVERHEAD == 16 * MiB
    assert file_bytes(100 * MiB) == 105 * MiB + 16 * MiB
    assert file_bytes(RAW) == RAW + RAW // 20 + 16 * MiB


def test_a_slab_trial_keeps_one_repeats_file():
    trial = Trial("a", "netcdf4", {"chunks": "contiguous", "codec": "none"})
    assert footprint(trial, WORKLOAD) == file_bytes(RAW)


@pytest.mark.parametrize("backend", ["netcdf4", "h5py", "zarr", "posix"])
def test_concurrent_processes_each_keep_a_file(backend):
    trial = Trial("a", backend, {"concurrency": 4})
    assert footprint(trial, WORKLOAD) == 4 * file_bytes(RAW)


def test_the_memory_backend_needs_no_scratch():
    assert footprint(Trial("a", "memory", {"concurrency": 8}), WORKLOAD) == 0


def test_mpiio_counts_what_all_ranks_move_together():
    params = {"access": "contiguous", "layout": "fpp", "nprocs": 4, "bytes_per_rank": 8 * MiB}
    assert footprint(Trial("a", "mpiio", params), WORKLOAD) == file_bytes(32 * MiB)
    block3d = {**params, "access": "block3d", "layout": "shared"}
    assert footprint(Trial("b", "mpiio", block3d), WORKLOAD) == file_bytes(RAW)
    # ranks are what it launches; the concurrency of slab trials does not multiply them
    many = {**params, "concurrency": 4}
    assert footprint(Trial("c", "mpiio", many), WORKLOAD) == file_bytes(32 * MiB)


def test_h5py_with_several_ranks_writes_one_shared_file():
    assert footprint(Trial("a", "h5py", {"nprocs": 4}), WORKLOAD) == file_bytes(RAW)
    # one rank: a slab trial, so its concurrency counts
    assert footprint(Trial("b", "h5py", {"nprocs": 1, "concurrency": 3}), WORKLOAD) == (
        3 * file_bytes(RAW)
    )


def test_per_host_trials_coexist_only_with_dask():
    trials = tuple(Trial(str(n), "posix", {"concurrency": n}) for n in (1, 2, 3, 4))
    one = file_bytes(RAW)
    serial = need(trials, WORKLOAD, ExecutionSpec(executor="serial", per_host=3))
    assert serial.nbytes == 4 * one and [t.id for t in serial.trials] == ["4"]
    dask = need(trials, WORKLOAD, ExecutionSpec(executor="dask", per_host=3))
    assert dask.nbytes == (4 + 3 + 2) * one
    assert [t.id for t in dask.trials] == ["4", "3", "2"]
    alone = need(trials, WORKLOAD, ExecutionSpec(executor="dask", per_host=1))
    assert alone.nbytes == 4 * one
    more = need(trials[:2], WORKLOAD, ExecutionSpec(executor="dask", per_host=8))
    assert more.nbytes == 3 * one  # no more trials at once than there are


def test_the_plan_decides_the_largest_trial():
    plan = make_plan(sweep({}, parameters={"codec": ["none", "zlib"], "concurrency": [1, 5]}))
    wanted = need(plan.trials, plan.sweep.workload, plan.sweep.execution)
    assert wanted.nbytes == 5 * file_bytes(RAW)
    assert wanted.trials[0].params["concurrency"] == 5


def test_the_reserve_is_one_gib_or_five_percent_of_a_small_file_system():
    assert preflight.reserve(100 * GiB) == GiB
    assert preflight.reserve(20 * GiB) == GiB
    assert preflight.reserve(10 * GiB) == GiB // 2
    assert preflight.reserve(64 * MiB) == int(64 * MiB * 0.05)


def _tree(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_a_huge_trial_is_refused_in_one_line_and_nothing_is_made(tmp_path):
    plan = make_plan(sweep({"shape": HUGE, "dtype": "float64"}, parameters={"codec": "zlib"}))
    with pytest.raises(UsageError) as err:
        check(plan, out=tmp_path / "out", scratch=None)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("trial netcdf4 ") and "codec=zlib" in message
    assert "needs 12.2TiB on " in message and "GiB free" in message
    assert message.endswith("; --force runs it anyway")
    assert _tree(tmp_path) == []
    check(plan, out=tmp_path / "out", scratch=None, force=True)  # force: no room check
    assert _tree(tmp_path) == []


def test_the_per_host_refusal_names_how_many_trials_at_once(tmp_path):
    plan = make_plan(
        sweep(
            {"shape": HUGE, "dtype": "float64"},
            parameters={"codec": ["zlib", "none"]},
            execution={"executor": "dask", "per_host": 2},
        )
    )
    with pytest.raises(UsageError, match=r"^2 trials at once \(execution.per_host\), the larg"):
        check(plan, out=tmp_path / "out", scratch=None)


def test_a_small_trial_passes(tmp_path):
    check(make_plan(sweep({})), out=tmp_path / "out", scratch=tmp_path)
    assert _tree(tmp_path) == []


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def leftover(parent: Path, nbytes: int, *, pid: int) -> Path:
    old = parent / f"{SCRATCH_PREFIX}killed"
    old.mkdir()
    (old / OWNER_FILE).write_text(f"{socket.gethostname()} {pid}\n")
    (old / "data").write_bytes(b"\1" * nbytes)
    return old


def test_the_margin_and_the_scratch_of_killed_runs_on_a_tmpfs(tmpfs, tmp_path):
    """A 64 MiB tmpfs: 3.2 MiB (5 %) stay free; a killed run's scratch counts as free."""
    scratch = tmpfs("64m")
    # needs 44 MiB * 1.05 + 16 MiB = 62.2 MiB: under the 64 MiB free, over 64 - 3.2
    plan = make_plan(sweep({"shape": {"time": 22, "y": 1024, "x": 1024}}))
    with pytest.raises(UsageError) as err:
        check(plan, out=tmp_path / "out", scratch=scratch)
    assert str(err.value).endswith(
        "needs 62.2MiB on " + str(scratch) + " (tmpfs), 64MiB free, of which iotune leaves "
        "3.2MiB; --force runs it anyway"
    )
    # needs 24 MiB * 1.05 + 16 MiB = 41.2 MiB: fits in 64 - 3.2 MiB, not beside 30 MiB
    plan = make_plan(sweep({"shape": {"time": 12, "y": 1024, "x": 1024}}))
    old = leftover(scratch, 30 * MiB, pid=os.getpid())  # a running sweep's: not free
    with pytest.raises(UsageError, match=r"needs 41.2MiB on .*, 34MiB free; --force"):
        check(plan, out=tmp_path / "out", scratch=scratch)
    (old / OWNER_FILE).write_text(f"{socket.gethostname()} {dead_pid()}\n")
    check(plan, out=tmp_path / "out", scratch=scratch)  # the run removes it first
    assert old.exists()  # but the check itself removes nothing


@pytest.mark.parametrize("option", ["-o", "--scratch"])
def test_a_read_only_file_system_is_refused(tmpfs, tmp_path, option):
    readonly = tmpfs("1m", readonly=True)
    plan = make_plan(sweep({}))
    out, scratch = (readonly / "out", None) if option == "-o" else (tmp_path / "out", readonly)
    with pytest.raises(UsageError) as err:
        check(plan, out=out, scratch=scratch)
    path = out if option == "-o" else scratch
    assert str(err.value) == f"{option} {path}: {readonly} (tmpfs) is mounted read-only"
    assert not (tmp_path / "out").exists()


def test_output_that_is_a_file_is_refused(tmp_path):
    plan = make_plan(sweep({}))
    (tmp_path / "results.nc").write_text("mine")
    with pytest.raises(UsageError, match=r"^-o .*results.nc: exists and is not a directory$"):
        check(plan, out=tmp_path / "results.nc", scratch=None)
    with pytest.raises(UsageError, match=r"^-o .*/sub: .*results.nc exists and is not a dir"):
        check(plan, out=tmp_path / "results.nc" / "sub", scratch=None)
    with pytest.raises(UsageError, match=r"^--scratch .*results.nc: not an existing directory$"):
        check(plan, out=tmp_path / "out", scratch=tmp_path / "results.nc")
    assert _tree(tmp_path) == ["results.nc"]
