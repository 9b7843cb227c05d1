"""The one interface executors implement; they know nothing of formats."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence

from iotune.model.records import TrialResult, TrialTask


class Executor(ABC):
    """Runs trial tasks; yields each result as soon as it is final."""

    @abstractmethod
    def map(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        """Run ``tasks`` and yield their results in completion order."""

    def close(self) -> None:  # noqa: B027 - most executors hold nothing
        """Release workers or clusters once every result has arrived."""

    def abort(self) -> None:
        """Stop running trials now (the sweep was interrupted) and release everything.

        Returns only when the processes that ran trials are gone, so their
        files are closed before the caller removes the scratch directory.
        """
        self.close()

    def describe(self) -> str:
        return type(self).__name__
