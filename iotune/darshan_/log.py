"""Open a Darshan log with pydarshan; reject what is not a readable log in one line.

The C reader under pydarshan may print to stderr or crash on a file that is
not a Darshan log or is cut short, so the header is checked here first: the
format version string, Darshan's magic number and the region map, whose last
region must end inside the file.  What passes is read module by module into
plain pandas DataFrames (:class:`Log`), the only thing the rest of
:mod:`iotune.darshan_` sees.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.errors import DarshanError
from iotune.extras import require

if TYPE_CHECKING:
    import pandas as pd

#: ``DARSHAN_MAGIC_NR`` in the header of every log (darshan-log-format.h)
MAGIC = 6567223
#: the newest log format version pydarshan 3.5 reads (darshan 3.4.x writes 3.41)
NEWEST = (3, 41)
OLDEST = (3, 0)
#: version string, magic, compression type, partial flag, name map, 16 module maps
_HEADER = 8 + 8 + 8 + 16 + 16 * 16
#: the modules iotune reads; everything else in a log (DXT, APMPI, ...) is ignored
MODULES = ("POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "LUSTRE")


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


def check_header(path: Path) -> str:
    """The log's format version; :class:`DarshanError` if ``path`` is no readable log."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(_HEADER)
    except OSError as err:
        raise DarshanError(f"{path}: cannot read: {err.strerror}") from err
    if path.is_dir():
        raise DarshanError(f"{path}: is a directory, not a Darshan log")
    magic = struct.unpack("<q", head[8:16])[0] if len(head) >= 16 else None
    if magic not in (MAGIC, _swapped(MAGIC)):
        raise DarshanError(f"{path}: not a Darshan log (no Darshan magic number in its header)")
    version = head[:8].rstrip(b"\0").decode("ascii", "replace")
    parsed = _version(version)
    if parsed is None or parsed < OLDEST:
        raise DarshanError(f"{path}: Darshan log format {version!r} is not supported (3.x is)")
    if parsed > NEWEST:
        raise DarshanError(
            f"{path}: Darshan log format {version} is newer than this reader "
            f"(pydarshan reads up to {NEWEST[0]}.{NEWEST[1]}); upgrade the darshan package"
        )
    if len(head) < _HEADER:
        raise DarshanError(f"{path}: truncated Darshan log ({size} bytes, header incomplete)")
    end = _regions_end(head, little=magic == MAGIC)
    if size < end:
        raise DarshanError(f"{path}: truncated Darshan log ({size} bytes of {end})")
    return version


def _swapped(value: int) -> int:
    return struct.unpack(">q", struct.pack("<q", value))[0]


def _version(text: str) -> tuple[int, int] | None:
    match = re.fullmatch(r"(\d+)\.(\d+)", text)
    return (int(match[1]), int(match[2])) if match else None


def _regions_end(head: bytes, *, little: bool) -> int:
    """Where the last region (name records, module records) of the log ends."""
    order = "<" if little else ">"
    maps = [struct.unpack(f"{order}QQ", head[at : at + 16]) for at in range(24, _HEADER, 16)]
    return max(off + length for off, length in maps)


def open_log(path: str | Path) -> Log:
    """Read a Darshan log.

    Parameters
    ----------
    path
        A ``.darshan`` file.

    Returns
    -------
    Log

    Raises
    ------
    DarshanError
        Not a Darshan log, truncated, a format version pydarshan cannot read, or a
        file the reader rejects; the message is one line naming the file.
    """
    require("darshan", extra="darshan", feature="reading a Darshan log")
    path = Path(path)
    if not path.exists():
        raise DarshanError(f"{path}: no such file")
    version = check_header(path)
    try:
        return _read(path, version)
    except DarshanError:
        raise
    except Exception as err:  # the C reader's failures come as many types
        reason = " ".join(str(err).split()) or type(err).__name__
        raise DarshanError(f"{path}: pydarshan cannot read this log: {reason}") from err


def _read(path: Path, version: str) -> Log:
    import darshan

    report = darshan.DarshanReport(str(path), read_all=False)
    records, partial = {}, []
    for module in MODULES:
        if module not in report.modules:
            continue
        if module == "LUSTRE":
            report.mod_read_all_lustre_records(warnings=False)
        else:
            report.mod_read_all_records(module, warnings=False)
        if module in report.records and len(report.records[module]):
            records[module] = report.records[module].to_df()
        if report.modules[module].get("partial_flag"):
            partial.append(module)
    job = report.metadata.get("job", {})
    return Log(
        path=str(path),
        version=version,
        nprocs=int(job.get("nprocs", 1)),
        exe=str(report.metadata.get("exe", "")),
        run_time=float(job.get("run_time", 0.0)),
        modules=tuple(report.modules),
        partial=tuple(partial),
        records=records,
        names=dict(report.name_records),
        hints=str(job.get("metadata", {}).get("h", "")),
    )


def frame(log: Log, module: str, kind: str = "counters") -> pd.DataFrame | None:
    """One DataFrame of a module (``counters``, ``fcounters``, ``components``), or None."""
    found: Any = log.records.get(module, {}).get(kind)
    return found if found is not None and len(found) else None
