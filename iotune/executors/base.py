"""The one interface executors implement; they know nothing of formats."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence

from iotune.trials.records import TrialResult, TrialTask


class Executor(ABC):
    """Runs trial tasks; yields each result as soon as it is final."""

    @abstractmethod
    def map(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        """Run ``tasks`` and yield their results in completion order."""

    def close(self) -> None:  # noqa: B027 - most executors hold nothing
        """Release workers or clusters."""

    def describe(self) -> str:
        return type(self).__name__
