"""The search's own log: every trial it asked for, in order, written before it runs.

``OUT/search.jsonl`` beside the journal: one JSON line per asked trial (its
measurement id, coordinates and why it was asked), appended and fsynced before
the trial is dispatched.  On ``--resume`` the search replays it: trials whose
results are in the journal are taken from there, trials that were in flight
are run again under the same id, so no trial is measured twice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from iotune.core.errors import ResultsError

SEARCH_LOG = "search.jsonl"


class SearchLog:
    """Append-only log of asked trials at ``path``; ``records`` holds an earlier run's."""

    def __init__(self, path: Path, *, digest: str, resume: bool) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        if path.exists() and path.stat().st_size and resume:
            lines = path.read_text(encoding="utf-8").split("\n")
            if json.loads(lines[0]).get("digest") != digest:
                raise ResultsError(f"{path} belongs to another search; use another output")
            for line in lines[1:]:
                try:
                    self.records.append(json.loads(line))
                except json.JSONDecodeError:
                    break  # a line cut by a crash, or the end
        else:
            path.unlink(missing_ok=True)
            self._write({"search_log": 1, "digest": digest})

    def _write(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, separators=(",", ":"), default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def append(self, record: dict[str, Any]) -> None:
        """Record an asked trial durably, before it runs."""
        self._write(record)
