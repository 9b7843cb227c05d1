"""The regions a conversion has finished, one fsynced JSON line each.

The first line names the source, the target format and the configuration; resuming
under another is refused, so finished regions are only ever skipped for the same job.
A line is written only after the region's data is on disk, so a crash loses at most
the region in flight, and it is written again on resume.  Once the target is verified
and has its name, a last line holds the conversion's report (``{"finished": ...}``):
the journal kept beside the target is then the proof that iotune wrote that target
for this job, so ``--resume`` finishes what came after instead of refusing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from iotune.core.errors import UsageError

JOURNAL_VERSION = 1
#: test hook: seconds to sleep after each region, so a test can kill a conversion half-way
DELAY_ENV = "IOTUNE_APPLY_REGION_DELAY"


class RegionJournal:
    """Append-only log of written regions at ``path``.

    Parameters
    ----------
    path
        The journal file.
    job
        What is converted (source, configuration, variables); the first line.
    resume
        Keep the regions of an earlier run of the same job.
    """

    def __init__(self, path: Path, *, job: dict[str, Any], resume: bool) -> None:
        self.path = path
        self.done: set[int] = set()
        if resume and path.exists() and path.stat().st_size:
            self._load(job)
        else:
            path.write_text("")
            self._append({"journal": JOURNAL_VERSION, "job": job})

    def _load(self, job: dict[str, Any]) -> None:
        lines = self.path.read_bytes().split(b"\n")
        header = json.loads(lines[0])
        if header.get("job") != job:
            raise UsageError(
                f"--resume: {self.path} belongs to another conversion (its source, "
                "configuration or variables differ); use --overwrite to start again"
            )
        for line in lines[1:]:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line torn by a crash: that region is written again
            if entry.get("written") is not None:
                self.done.add(int(entry["written"]))

    def _append(self, entry: dict[str, Any]) -> None:
        with self.path.open("a") as fh:
            fh.write(json.dumps(entry) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def written(
        self, index: int, start: int, stop: int, inner: tuple[tuple[int, int], ...] = ()
    ) -> None:
        """Record region ``index`` (rows ``start`` to ``stop``) as on disk.

        A region of several dimensions has its ``inner`` bounds recorded too, with all
        its bounds per dimension under ``bounds`` (``[[start, stop], [lo, hi]]``).
        """
        entry: dict[str, Any] = {"written": index, "start": start, "stop": stop}
        if inner:
            entry["bounds"] = [[start, stop], *map(list, inner)]
        self._append(entry)
        self.done.add(index)

    def finished(self, report: dict[str, Any]) -> None:
        """Record the conversion as verified and renamed into place, with its ``report``."""
        self._append({"finished": report})

    def entries(self) -> list[dict[str, Any]]:
        """Every line after the header (for tests and the report)."""
        lines = self.path.read_text().splitlines()[1:]
        return [json.loads(line) for line in lines if line.strip()]


def finished_report(path: Path, *, job: dict[str, Any]) -> dict[str, Any] | None:
    """The report of a finished conversion of ``job`` recorded in the journal at ``path``.

    None when there is no journal, it is another job's, or its conversion did not finish
    (a target beside it was not made by this job, or not verified).
    """
    if not path.is_file():
        return None
    lines = [line for line in path.read_bytes().split(b"\n") if line.strip()]
    try:
        header, last = json.loads(lines[0]), json.loads(lines[-1])
    except (IndexError, ValueError):  # empty, or the last line torn: not finished
        return None
    if header.get("job") != job or not isinstance(last.get("finished"), dict):
        return None
    return dict(last["finished"])
