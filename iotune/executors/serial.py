"""Run trials one after another in this process."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from iotune.executors.base import Executor
from iotune.trial import TrialResult, TrialTask, run_trial


class SerialExecutor(Executor):
    """One trial at a time, in process: nothing else competes for the file system."""

    def map(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        for task in tasks:
            yield run_trial(task)

    def describe(self) -> str:
        return "serial (in process, one trial at a time)"
