"""Stopping a real `iotune run` mid-trial: SIGINT, SIGTERM, SIGHUP, SIGKILL.

Each test starts the command line as a user would, waits until one trial is
in the journal and the next one is writing its scratch file, sends the
signal, then checks what a user on a shared file system depends on: the
command ends within seconds with the interrupted exit code, no process of the
sweep is left, no scratch file remains and no deleted file is held open (the
space is really free), the journal and results.nc keep the finished trials,
the lock is gone, and ``--resume`` completes the sweep.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import xarray as xr
import yaml

pytestmark = pytest.mark.slow

# the first trial (codec none) takes well under a second, the second (zlib 9 on
# random floats) about three seconds per repeat: the signal lands in the middle of it,
# and the resume that measures it again stays short
SERIAL = {
    "version": 1,
    "name": "stopping",
    "workload": {"shape": {"time": 16, "y": 512, "x": 512}, "dtype": "float32", "field": "random"},
    "backend": "netcdf4",
    "parameters": {"chunks": [[8, 256, 256]], "codec": ["none", "zlib"], "level": 9},
    "read": {"patterns": ["full"]},
    # a journal line per whole trial, no probes: "one trial done, the next one writing"
    # (the interleaved order resumes per repeat: tests/runner/test_schedule.py)
    "measure": {"repeats": 2, "order": "sequential", "noise_probes": 0},
}
# a dask sweep hands out the longest trial first (runner/expected.py): two trials of the
# same cost (zlib 9 on random floats), so whichever runs second is still writing when
# the signal lands
DASK = {**SERIAL, "parameters": {"chunks": [[8, 256, 256], [16, 256, 256]], "codec": ["zlib"]}}
DASK["parameters"]["level"] = 9
# MPI-IO: 1 MiB transfers first, then 4 KiB transfers of the same 256 MiB per repeat
MPIIO = {
    "version": 1,
    "name": "stopping-mpiio",
    "workload": {"shape": {"time": 256, "y": 512, "x": 512}, "dtype": "int32"},
    "backend": "mpiio",
    "parameters": {"nprocs": 2, "transfer_size": ["1MiB", "4KiB"], "io": "independent"},
    "measure": {"repeats": 3, "noise_probes": 0},
}


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (children of children included)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            living.add(pid)
    return living


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def deleted_files_held(under: Path) -> list[str]:
    """Open files below ``under`` that were deleted: space no ``ls`` shows."""
    prefix, held = str(under.resolve()), []
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if target.startswith(prefix) and target.endswith(" (deleted)"):
            held.append(f"{fd}: {target}")
    return held


def journal_ids(out: Path) -> list[str]:
    path = out / "journal.jsonl"
    lines = path.read_text().splitlines()[1:] if path.exists() else []
    return [json.loads(line)["id"] for line in lines]


def scratch_files(out: Path) -> list[Path]:
    # os.walk, not glob: a trial that ends removes its directory while we look
    found = []
    for root in out.glob("iotune-scratch-*"):
        for parent, _dirs, files in os.walk(root):
            found += [Path(parent) / f for f in files if (Path(parent) / f).is_file()]
    return found


def start(spec: dict, tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, Path, Path]:
    path, out = tmp_path / "spec.yaml", tmp_path / "out"
    path.write_text(yaml.safe_dump(spec))
    cmd = [sys.executable, "-m", "iotune", "run", str(path), "-o", str(out), "--no-progress"]
    proc = subprocess.Popen([*cmd, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, path, out


def wait_mid_trial(proc: subprocess.Popen, out: Path, *, data: str) -> set[int]:
    """Block until one trial is journaled and the next is writing; return the sweep's processes."""
    deadline, seen = time.monotonic() + 180, set()
    while time.monotonic() < deadline:
        seen |= descendants(proc.pid)
        assert proc.poll() is None, proc.communicate()
        writing = [p for p in scratch_files(out) if p.match(data)]
        if journal_ids(out) and writing and any(p.stat().st_size > 0 for p in writing):
            time.sleep(0.5)  # well into the write
            return seen | descendants(proc.pid)
        time.sleep(0.05)
    raise AssertionError("the sweep never reached its second trial")


def stop(proc: subprocess.Popen, sig: int) -> tuple[float, str]:
    t0 = time.monotonic()
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=60)
    return time.monotonic() - t0, err.decode()


def check_stopped(proc, out: Path, seen: set[int], elapsed: float, err: str, code: int) -> None:
    assert proc.returncode == code, err
    assert elapsed < 10, f"took {elapsed:.1f} s to stop"
    assert "Traceback" not in err, err
    assert "rerun with --resume" in err
    deadline = time.monotonic() + 5
    while alive(seen) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(seen), f"processes of the sweep left: {sorted(alive(seen))}"
    assert scratch_files(out) == []
    assert not list(out.glob("iotune-scratch-*"))
    assert deleted_files_held(out) == []
    assert not (out / ".iotune.lock").exists()
    done = journal_ids(out)
    assert len(done) == 1, "the finished trial is kept, the interrupted one is not"
    ds = xr.open_dataset(out / "results.nc")
    assert sorted(ds["status"].values.ravel().tolist()) == ["ok", "pending"]


def resume(spec_path: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "iotune", "run", str(spec_path), "-o", str(out)]
    done = subprocess.run(
        [*cmd, "--resume", "--no-progress", *extra], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert len(journal_ids(out)) == 2
    assert scratch_files(out) == [] and deleted_files_held(out) == []
    return done


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_a_signal_stops_a_serial_sweep_mid_trial(tmp_path, sig, code):
    proc, spec, out = start(SERIAL, tmp_path)
    seen = wait_mid_trial(proc, out, data="r*.nc")
    elapsed, err = stop(proc, sig)
    check_stopped(proc, out, seen, elapsed, err, code)
    resume(spec, out)


def test_a_second_ctrl_c_stops_at_once(tmp_path):
    proc, spec, out = start(SERIAL, tmp_path)
    seen = wait_mid_trial(proc, out, data="r*.nc")
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    deadline = time.monotonic() + 10
    while alive(seen) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(seen)
    assert len(journal_ids(out)) == 1
    done = resume(spec, out)
    assert scratch_files(out) == []
    assert "removed scratch left by an earlier run" in done.stderr or not list(
        out.glob("iotune-scratch-*")
    )


def test_slurm_kill_sequence_sigterm_then_sigkill_loses_nothing(tmp_path):
    """scancel: SIGTERM, then SIGKILL after KillWait (here 2 s), whatever the sweep does."""
    proc, spec, out = start(SERIAL, tmp_path)
    seen = wait_mid_trial(proc, out, data="r*.nc")
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        proc.kill()
    proc.communicate()
    deadline = time.monotonic() + 10
    while alive(seen) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(seen)
    assert deleted_files_held(out) == []
    assert len(journal_ids(out)) == 1
    resume(spec, out)
    assert not list(out.glob("iotune-scratch-*"))


def kill_9_then_resume(spec: dict, tmp_path: Path, *extra: str, data: str) -> None:
    proc, path, out = start(spec, tmp_path, *extra)
    seen = wait_mid_trial(proc, out, data=data)
    proc.kill()
    proc.communicate()
    deadline = time.monotonic() + 10
    while alive(seen) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(seen), f"processes outlived the sweep: {[cmdline(p) for p in alive(seen)]}"
    assert deleted_files_held(out) == []
    assert scratch_files(out), "nothing of iotune ran after SIGKILL: its scratch is still there"
    assert len(journal_ids(out)) == 1
    done = resume(path, out, *extra)
    assert "removed scratch left by an earlier run" in done.stderr
    assert not list(out.glob("iotune-scratch-*"))


def test_kill_9_leaves_scratch_that_the_next_run_removes_and_says_so(tmp_path):
    kill_9_then_resume(SERIAL, tmp_path, data="r*.nc")


def test_kill_9_of_a_dask_sweep(tmp_path):
    kill_9_then_resume(DASK, tmp_path, "--workers", "1", data="r*.nc")


# Ctrl-C, as in a terminal or a notebook; SIGTERM takes the same handler (serial sweeps
# test every signal, MPI ranks SIGTERM)
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130)])
def test_a_signal_stops_a_dask_sweep_and_its_workers(tmp_path, sig, code):
    proc, spec, out = start(DASK, tmp_path, "--workers", "1")
    seen = wait_mid_trial(proc, out, data="r*.nc")
    elapsed, err = stop(proc, sig)
    check_stopped(proc, out, seen, elapsed, err, code)
    resume(spec, out, "--workers", "1")


def need_mpiexec() -> None:
    from iotune.mpi.launch import find_mpiexec

    if find_mpiexec() is None:
        if os.environ.get("IOTUNE_REQUIRE_MPI") == "1":
            pytest.fail("IOTUNE_REQUIRE_MPI=1 but no mpiexec (install the mpich wheel)")
        pytest.skip("no mpiexec: install the mpich wheel")


@pytest.mark.mpi
def test_kill_9_of_an_mpiio_sweep_ends_its_ranks(tmp_path):
    need_mpiexec()
    kill_9_then_resume(MPIIO, tmp_path, data="shared.dat")


@pytest.mark.mpi
# SIGTERM, as a scheduler's time limit sends it; Ctrl-C takes the same handler
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143)])
def test_a_signal_stops_launched_mpi_ranks(tmp_path, sig, code):
    need_mpiexec()
    proc, spec, out = start(MPIIO, tmp_path)
    seen = wait_mid_trial(proc, out, data="shared.dat")
    assert any("mpi" in Path(f"/proc/{p}/cmdline").read_text() for p in alive(seen)), (
        "the signal should land while the ranks run"
    )
    elapsed, err = stop(proc, sig)
    check_stopped(proc, out, seen, elapsed, err, code)
    resume(spec, out)


def test_interrupting_the_kernel_stops_the_workers_and_keeps_finished_trials(tmp_path):
    """The notebook case: Kernel > Interrupt during ``iotune.run`` (SIGINT to the kernel)."""
    from jupyter_client.manager import start_new_kernel

    spec, out = tmp_path / "spec.yaml", tmp_path / "out"
    spec.write_text(yaml.safe_dump(SERIAL))
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        kernel_pid = km.provisioner.process.pid
        code = f"import iotune\nds = iotune.run({str(spec)!r}, out={str(out)!r}, progress=False)"
        msg_id = kc.execute(code)
        deadline, seen = time.monotonic() + 180, set()
        while time.monotonic() < deadline:
            seen |= descendants(kernel_pid)
            writing = [p for p in scratch_files(out) if p.match("r*.nc")]
            if journal_ids(out) and writing and any(p.stat().st_size > 0 for p in writing):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the sweep never reached its second trial")
        # multiprocessing's resource tracker lives as long as the kernel, by design
        seen = {p for p in seen | descendants(kernel_pid) if "resource_tracker" not in cmdline(p)}
        assert seen, "trials run in a worker process of the kernel"
        t0 = time.monotonic()
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=60)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = kc.get_shell_msg(timeout=60)
        assert time.monotonic() - t0 < 10
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        deadline = time.monotonic() + 5
        while alive(seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(seen), "the kernel's trial workers are stopped"
        assert scratch_files(out) == [] and deleted_files_held(out) == []
        assert len(journal_ids(out)) == 1
        assert not (out / ".iotune.lock").exists()
        # the kernel is still usable and the sweep resumes from it
        kc.execute_interactive(
            f"ds = iotune.run({str(spec)!r}, out={str(out)!r}, resume=True, progress=False)",
            timeout=300,
        )
        assert len(journal_ids(out)) == 2
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
