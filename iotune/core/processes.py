"""Process lifetimes: every process a sweep starts ends when the sweep does.

A trial's worker process leads a process group of its own; the processes it
starts (concurrent writers, ``mpiexec`` and its ranks) stay in that group, so
stopping a sweep stops the whole group at once.  Each of them also asks the
kernel to kill it when its parent dies (``PR_SET_PDEATHSIG``), which covers a
``kill -9`` of the sweep, where nothing of iotune runs any more.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import time

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Have the kernel kill this process when its parent dies (Linux).

    Safe in ``subprocess``'s ``preexec_fn``: the setting survives ``execve``.
    A process blocked on a pipe would otherwise outlive a ``kill -9`` of the
    sweep for ever, holding its scratch files open.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return  # not Linux: the process ends when its pipe breaks
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


def with_parent(command: list[str]) -> list[str]:
    """``command`` run so that it dies with this process (``setpriv --pdeathsig``).

    For programs that are not Python (an MPI launcher); ``preexec_fn`` is not
    safe in a threaded dask worker.  Without util-linux's ``setpriv`` the
    command runs as it is and outlives a ``kill -9`` of its parent.
    """
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else command


def lead_group() -> None:
    """Make this process the leader of a new process group.

    A terminal's Ctrl-C then reaches only the sweep process, which stops its
    workers in order (their files closed before their scratch is removed)
    instead of every worker dying on its own mid-write.
    """
    try:
        os.setpgid(0, 0)
    except OSError:
        return  # already a session or group leader


def group_alive(pgid: int) -> bool:
    """Whether any process of the process group ``pgid`` still runs (zombies aside)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields after the command: state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def stop_group(pgid: int, *, grace: float = 3.0) -> None:
    """SIGTERM the process group ``pgid``, then SIGKILL what is left after ``grace`` s.

    Returns once no process of the group runs, so their files are closed and
    the space of deleted files is free.
    """
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not group_alive(pgid):
                return
            time.sleep(0.02)


def is_gone(pid: int) -> bool:
    """Whether process ``pid`` of this host has ended (an owner mark's process, say)."""
    if pid <= 0:
        return False  # 0 and negatives would name process groups
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False
