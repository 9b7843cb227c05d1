"""Open a Darshan log with pydarshan; reject what is not a readable log in one line.

Darshan's C reader under pydarshan prints to stderr, asserts or crashes on a
file that is not a Darshan log, is cut short or was overwritten, so a log is
first checked in Python (:mod:`iotune.darshan_.layout`: header, region map,
every region iotune reads decompressed) and then read in a child process
(:mod:`iotune.darshan_.reader`), where a crash of the library is one error
instead of the end of the CLI or of a notebook's kernel.  What it reads is
plain pandas DataFrames per module (:class:`Log`), the only thing the rest of
:mod:`iotune.darshan_` sees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.core.errors import DarshanError
from iotune.core.extras import require
from iotune.darshan_.layout import Layout, check_layout
from iotune.darshan_.reader import MODULES, TIMEOUT, read_log

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MODULES", "Log", "frame", "open_log"]

#: more processes than any machine runs: a job record that says so is corrupt
MAX_PROCS = 2**24


@dataclass(frozen=True)
class Log:
    """What iotune reads from a Darshan log.

    ``records[module]`` holds pydarshan's DataFrames of that module
    (``counters`` and ``fcounters``; ``components`` for LUSTRE), with columns
    ``rank`` (-1 for a file shared by all ranks, reduced by Darshan) and ``id``
    (the record id, a key of ``names``).
    """

    path: str
    version: str
    nprocs: int
    exe: str
    run_time: float
    modules: tuple[str, ...]
    partial: tuple[str, ...]
    records: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    hints: str = ""

    @property
    def executable(self) -> str:
        """The program's base name (``ior``), for file names; ``app`` when unknown."""
        words = self.exe.split()
        name = Path(words[0]).name if words else ""
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")
        return name if name and not name.isdigit() else "app"


def open_log(path: str | Path, *, timeout: float = TIMEOUT) -> Log:
    """Read a Darshan log.

    Parameters
    ----------
    path
        A ``.darshan`` file.
    timeout
        Seconds the reader (a child process) may take before the log is
        reported as unreadable.

    Returns
    -------
    Log

    Raises
    ------
    DarshanError
        Not a Darshan log, truncated, corrupt, a format version pydarshan cannot
        read, or a log on which Darshan's library fails, crashes or hangs; the
        message is one line naming the file.
    """
    require("darshan", extra="darshan", feature="reading a Darshan log")
    path = Path(path)
    if not path.exists():
        raise DarshanError(f"{path}: no such file")
    return _read(path, check_layout(path), timeout=timeout)


def _read(path: Path, layout: Layout, *, timeout: float) -> Log:
    found = read_log(path, timeout=timeout)
    if not 1 <= found["nprocs"] <= MAX_PROCS:
        raise DarshanError(
            f"{path}: corrupt Darshan log: its job record says {found['nprocs']} processes "
            f"(a job has 1 to {MAX_PROCS})"
        )
    return Log(
        path=str(path),
        version=layout.version,
        nprocs=found["nprocs"],
        exe=found["exe"],
        run_time=found["run_time"],
        modules=found["modules"],
        partial=found["partial"],
        records=found["records"],
        names=found["names"],
        hints=found["hints"],
    )


def frame(log: Log, module: str, kind: str = "counters") -> pd.DataFrame | None:
    """One DataFrame of a module (``counters``, ``fcounters``, ``components``), or None."""
    found: Any = log.records.get(module, {}).get(kind)
    return found if found is not None and len(found) else None
