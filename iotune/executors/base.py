"""The one interface executors implement; they know nothing of formats."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from iotune.model.records import TrialResult, TrialTask

if TYPE_CHECKING:
    from iotune.runner.expected import Expected


class Executor(ABC):
    """Runs trial tasks; yields each result as soon as it is final."""

    #: expected task costs (:meth:`expect`); a farm hands out the longest first
    expected: Expected | None = None

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

    def expect(self, expected: Expected) -> None:
        """Use ``expected`` to order the tasks this executor runs at once (serial: unused)."""
        self.expected = expected

    def workers(self) -> int:
        """How many tasks run at once (for the run's efficiency figures)."""
        return 1

    def describe(self) -> str:
        return type(self).__name__
