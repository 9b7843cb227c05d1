"""Scratch directories of iotune's own, and the clean-up of those left by killed runs.

Trials write only inside a fresh ``iotune-scratch-*`` directory that carries
an owner mark (host and pid); iotune deletes only directories with a mark
whose process is gone, and says so, one line per directory.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from iotune.core.errors import UsageError
from iotune.core.processes import is_gone
from iotune.core.units import format_size
from iotune.runner.journal import DirectoryLock

logger = logging.getLogger(__name__)
SCRATCH_PREFIX = "iotune-scratch-"
OWNER_FILE = ".iotune-owner"


@dataclass(frozen=True)
class Leftover:
    """An ``iotune-scratch-*`` directory and what its owner mark says."""

    path: Path
    #: ``dead`` (a process of this host that is gone), ``alive``, ``elsewhere``
    #: (another host: cannot be checked from here) or ``unmarked``
    state: str
    host: str = ""
    pid: int = 0

    def text(self, nbytes: int) -> str:
        """One line saying what was removed or why it was left alone."""
        size = format_size(nbytes, exact=False)
        if self.state == "dead":
            return f"removed scratch left by an earlier run (pid {self.pid}, {size}): {self.path}"
        if self.state == "alive":
            return f"kept scratch of a running iotune (pid {self.pid}, {size}): {self.path}"
        if self.state == "elsewhere":
            return (
                f"kept scratch of pid {self.pid} on host {self.host} ({size}; cannot be "
                f"checked from here, delete it by hand if that run is gone): {self.path}"
            )
        return f"kept {self.path} ({size}): no owner mark, so not known to be iotune's"


def _say(line: str) -> None:
    # a warning, not information: iotune deleted something the user may look for
    logger.warning("%s", line)


def make_scratch_root(
    scratch: str | Path | None, out: Path, *, say: Callable[[str], None] = _say
) -> Path:
    """A fresh directory of iotune's own, inside the one the user named (or ``out``).

    Directories left by runs on this host that were killed are removed first,
    each with a line passed to ``say`` (default: a warning of this module's
    logger); iotune only ever deletes directories that carry its owner mark.
    """
    parent = Path(scratch) if scratch is not None else out
    if not parent.is_dir():
        raise UsageError(f"--scratch {parent}: not an existing directory")
    for line in remove_leftovers(parent):
        say(line)
    root = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=parent))
    (root / OWNER_FILE).write_text(f"{socket.gethostname()} {os.getpid()}\n")
    return root


def scan(parent: Path) -> list[Leftover]:
    """Every ``iotune-scratch-*`` directory in ``parent`` with its owner's state."""
    found = []
    for path in sorted(parent.glob(f"{SCRATCH_PREFIX}*")):
        if not path.is_dir() or path.is_symlink():
            continue
        try:
            host, pid_text = (path / OWNER_FILE).read_text().split()
            pid = int(pid_text)
        except (OSError, ValueError):
            found.append(Leftover(path, "unmarked"))  # not ours, or not readable: leave it
            continue
        elsewhere = host != socket.gethostname()  # its process cannot be checked from here
        state = "elsewhere" if elsewhere else ("dead" if is_gone(pid) else "alive")
        found.append(Leftover(path, state, host, pid))
    return found


def remove_leftovers(parent: Path, *, report_kept: bool = False) -> list[str]:
    """Delete the directories in ``parent`` whose owner is gone; one line for each.

    With ``report_kept``, also a line for each directory left alone and why.
    """
    lines = []
    for old in scan(parent):
        if old.state == "dead":
            size = disk_usage(old.path)
            shutil.rmtree(old.path, ignore_errors=True)
            lines.append(old.text(size))
        elif report_kept:
            lines.append(old.text(disk_usage(old.path)))
    return lines


def reclaimable(parent: Path) -> int:
    """Bytes that :func:`remove_leftovers` would free in ``parent``."""
    if not parent.is_dir():
        return 0
    return sum(disk_usage(old.path) for old in scan(parent) if old.state == "dead")


def disk_usage(path: Path) -> int:
    """Bytes the files under ``path`` occupy (allocated blocks, as ``du``)."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += (Path(folder) / name).lstat().st_blocks * 512
            except OSError:
                continue  # removed meanwhile
    return total


def remove_stale_lock(directory: Path) -> str | None:
    """Delete the lock file of an output directory unless a process holds it.

    Returns a line saying so, or ``None`` when there is no lock file or a
    running sweep holds it.  The file is unlinked while locked here, and
    :class:`~iotune.runner.journal.DirectoryLock` keeps a lock only on a file
    still in place, so a run starting meanwhile never holds a removed one.
    """
    path = DirectoryLock(directory).path
    try:
        fh = path.open("r", encoding="utf-8")
    except FileNotFoundError:
        return None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None
        try:
            if not os.path.samestat(os.fstat(fh.fileno()), path.stat()):
                return None  # replaced meanwhile: the new one belongs to a run
        except FileNotFoundError:
            return None
        owner = fh.read().strip() or "unknown"
        path.unlink()
    return f"removed the lock of a run that was killed (pid {owner}): {path}"
