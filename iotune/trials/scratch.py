"""Scratch directories of iotune's own, and the clean-up of those left by killed runs.

Trials write only inside a fresh ``iotune-scratch-*`` directory that carries
an owner mark (host and pid); iotune deletes only directories with a mark
whose process is gone.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

from iotune.errors import UsageError

SCRATCH_PREFIX = "iotune-scratch-"
OWNER_FILE = ".iotune-owner"


def make_scratch_root(scratch: str | Path | None, out: Path) -> Path:
    """A fresh directory of iotune's own, inside the one the user named (or ``out``).

    Directories left by runs on this host that were killed are removed first;
    iotune only ever deletes directories that carry its owner mark.
    """
    parent = Path(scratch) if scratch is not None else out
    if not parent.is_dir():
        raise UsageError(f"--scratch: {parent} is not an existing directory")
    for old in parent.glob(f"{SCRATCH_PREFIX}*"):
        if owner_is_dead(old / OWNER_FILE):
            shutil.rmtree(old, ignore_errors=True)
    root = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=parent))
    (root / OWNER_FILE).write_text(f"{socket.gethostname()} {os.getpid()}\n")
    return root


def owner_is_dead(mark: Path) -> bool:
    try:
        host, pid = mark.read_text().split()
    except (OSError, ValueError):
        return False  # not ours, or not readable: leave it alone
    if host != socket.gethostname():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
