"""A crash-safe log of finished trials, and the lock on an output directory.

One JSON object per line, appended and fsynced per trial, so a crash loses
at most the trial in flight.  The first line names the sweep it belongs to;
resuming with a different sweep is refused.  Interleaved trials write one
line per repeat (``"part": N``) and a whole line once they are complete; the
noise probes of a sweep write ``"probe": K`` lines.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import IO, Any

from iotune.core.errors import LockError, ResultsError
from iotune.model.records import TrialResult

JOURNAL_VERSION = 1


class Journal:
    """Append-only trial log at ``path``.

    Parameters
    ----------
    path
        The journal file (created when missing).
    digest
        :meth:`iotune.model.spec.Sweep.digest` of the sweep being run.
    resume
        Keep finished trials of an earlier run of the same sweep; otherwise an
        existing journal is an error.
    """

    def __init__(self, path: Path, *, digest: str, name: str, resume: bool) -> None:
        self.path = path
        self.done: dict[str, TrialResult] = {}
        #: repeats of trials measured one repeat at a time: {trial id: {repeat: result}}
        self.parts: dict[str, dict[int, TrialResult]] = {}
        #: single repeats of the sweep's reference configuration, by probe number
        self.probes: dict[int, TrialResult] = {}
        if path.exists() and path.stat().st_size:
            if not resume:
                raise ResultsError(
                    f"{path.parent} already holds results of a sweep; pass "
                    "--resume to continue it or --overwrite to start again"
                )
            self._load(digest)
        else:
            self._write_line({"journal": JOURNAL_VERSION, "digest": digest, "name": name})

    def _load(self, digest: str) -> None:
        good = 0
        with self.path.open("rb") as fh:
            lines = fh.read().split(b"\n")
        header = json.loads(lines[0])
        if header.get("digest") != digest:
            raise ResultsError(
                f"{self.path} belongs to sweep {header.get('name')!r} with other "
                "settings; resume it with its own spec or use another output"
            )
        good = len(lines[0]) + 1
        for line in lines[1:]:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break  # a line cut by a crash: everything after it is dropped
            self._remember(record)
            good += len(line) + 1
        with self.path.open("r+b") as fh:
            fh.truncate(good)

    def _write_line(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, separators=(",", ":")) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def _remember(self, record: dict[str, Any]) -> None:
        part, probe = record.pop("part", None), record.pop("probe", None)
        result = TrialResult.from_dict(record)
        if part is not None:
            self.parts.setdefault(result.id, {})[int(part)] = result
        elif probe is not None:
            self.probes[int(probe)] = result
        else:
            self.done[result.id] = result

    def append(self, result: TrialResult) -> None:
        """Record a finished trial durably."""
        self._write_line(result.to_dict())
        self.done[result.id] = result

    def append_part(self, result: TrialResult, repeat: int) -> None:
        """Record one repeat of a trial measured a repeat at a time."""
        self._write_line({"part": repeat, **result.to_dict()})
        self.parts.setdefault(result.id, {})[repeat] = result

    def append_probe(self, result: TrialResult, number: int) -> None:
        """Record one measurement of the sweep's reference configuration."""
        self._write_line({"probe": number, **result.to_dict()})
        self.probes[number] = result


class DirectoryLock:
    """An exclusive ``flock`` on ``<dir>/.iotune.lock`` for the life of a run.

    The kernel drops it when the process dies, so a killed run never leaves a
    lock that holds (only its empty file, which the next run reuses); a run
    that ends, even by a signal, removes the file.
    """

    def __init__(self, directory: Path) -> None:
        self.path = directory / ".iotune.lock"
        self._fh: IO[str] | None = None

    def __enter__(self) -> DirectoryLock:
        while True:
            self._fh = self.path.open("a+", encoding="utf-8")
            try:
                fcntl.flock(self._fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._fh.seek(0)
                owner = self._fh.read().strip() or "unknown"
                self._fh.close()
                raise LockError(
                    f"{self.path.parent} is in use by another iotune run (pid {owner})"
                ) from None
            if self._still_linked():
                break
            self._fh.close()  # the run before us removed it meanwhile: lock the new file
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.write(str(os.getpid()))
        self._fh.flush()
        return self

    def _still_linked(self) -> bool:
        assert self._fh is not None
        try:
            return self.path.stat().st_ino == os.fstat(self._fh.fileno()).st_ino
        except FileNotFoundError:
            return False

    def __exit__(self, *exc: object) -> None:
        if self._fh:
            # removed while still held, so no other run can be between the two steps
            self.path.unlink(missing_ok=True)
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
