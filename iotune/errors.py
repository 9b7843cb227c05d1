"""The exceptions iotune raises on purpose.

Every error carries enough context to be shown to a user as one line: the
field, the offending value and what is allowed.  The CLI maps
:class:`UsageError` (and its subclasses) to exit code 2.
"""

from __future__ import annotations


class IotuneError(Exception):
    """Base class of every error iotune raises deliberately."""


class UsageError(IotuneError, ValueError):
    """The user asked for something iotune cannot do (exit code 2)."""


class SpecError(UsageError):
    """A sweep spec is malformed.

    Parameters
    ----------
    field
        Dotted path of the offending field, e.g. ``parameters.codec[2]``.
    message
        What is wrong and what is allowed.
    source
        The spec file, when known.
    """

    def __init__(self, field: str, message: str, *, source: str | None = None) -> None:
        self.field = field
        self.message = message
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{field}: {message}" if field else f"{where}{message}")


class ResultsError(UsageError):
    """A results file or journal cannot be used as asked."""


class LockError(UsageError):
    """Another sweep holds the output directory."""


class NotApplicable(IotuneError):
    """A parameter combination that a backend cannot express.

    Not a failure: the plan records the grid point with this reason.
    """


class VerificationError(IotuneError):
    """A written file does not hold what was asked for (filters, chunks, data)."""
