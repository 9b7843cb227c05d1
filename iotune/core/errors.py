"""The exceptions iotune raises on purpose.

Every error carries enough context to be shown to a user as one line: the
field, the offending value and what is allowed.  The CLI maps
:class:`UsageError` (and its subclasses) to exit code 2.
"""

from __future__ import annotations

import traceback
from pathlib import Path


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


class RecommendError(UsageError):
    """An objective, weight or constraint that the results cannot answer."""


class DarshanError(UsageError):
    """A Darshan log iotune cannot read (not Darshan, truncated, an unknown format version)."""


class LockError(UsageError):
    """Another sweep holds the output directory."""


class Interrupted(KeyboardInterrupt):
    """The sweep was stopped by a signal (SIGTERM from ``scancel`` or a walltime, SIGHUP).

    A :class:`KeyboardInterrupt`, so code that handles Ctrl-C handles these
    too; ``exit_code`` is the shell's ``128 + signal number`` (143, 129).
    """

    def __init__(self, signum: int) -> None:
        import signal

        self.signum = signum
        self.name = signal.Signals(signum).name
        super().__init__(f"stopped by {self.name}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class MissingExtraError(UsageError):
    """A feature needs a library from an extra that is not installed (exit code 2).

    Parameters
    ----------
    feature
        What the user asked for, e.g. ``iotune tune``.
    module
        The missing importable module, e.g. ``optuna``.
    extra
        The extra that installs it, e.g. ``search``.
    hint
        The command that installs it (:func:`iotune.core.extras.install_hint`).
    """

    def __init__(self, feature: str, module: str, extra: str, *, hint: str = "") -> None:
        self.feature, self.module, self.extra = feature, module, extra
        if not hint:  # an index's install; core.extras.install_hint knows a clone's
            hint = f"pip install 'iotune[{extra}]'"
            if extra == "mpi":
                hint += " (or 'iotune[mpich]' on a laptop)"
        super().__init__(f"{feature} needs {module}, which is not installed: {hint}")


class StorageError(UsageError):
    """The object store cannot be used as the spec says (exit code 2)."""


class NotApplicable(IotuneError):
    """A parameter combination that a backend cannot express.

    Not a failure: the plan records the grid point with this reason.
    """


class ConcurrencyError(IotuneError):
    """A concurrent writer or reader failed; the message carries its reason."""


class ClusterError(IotuneError):
    """The sweep's dask cluster lost every worker and none came back; finished trials are kept."""


class LoaderError(IotuneError):
    """A loader worker of the batches pattern failed or died; the message says which and why."""


class MpiError(IotuneError):
    """A launched MPI trial failed; the message carries the failing rank's reason."""


class LustreError(IotuneError):
    """``lfs`` is missing or refused a request; the message carries its reason."""


class VerificationError(IotuneError):
    """A written file does not hold what was asked for (filters, chunks, data)."""


class UserCodeError(IotuneError):
    """The user's function (a ``read.patterns`` entry) failed; the message is its last line."""


def one_line(err: BaseException) -> str:
    if isinstance(err, UserCodeError):  # already the user's own last traceback line
        return str(err)
    if isinstance(err, IotuneError):
        return f"{type(err).__name__}: {err}"
    frame = traceback.extract_tb(err.__traceback__)[-1] if err.__traceback__ else None
    where = f" (at {Path(frame.filename).name}:{frame.lineno})" if frame else ""
    text = " ".join(str(err).split()) or type(err).__name__
    return f"{type(err).__name__}: {text}{where}"


def reason(err: BaseException) -> str:
    """What went wrong in words, for a one-line message that names the path itself.

    An ``OSError`` gives its ``strerror`` in lower case (``no such file or directory``,
    ``permission denied``), never its errno, which is what ``err.args[0]`` holds; any
    other error gives the first line of its text.
    """
    if isinstance(err, OSError) and err.strerror:
        return err.strerror[0].lower() + err.strerror[1:]
    if isinstance(err, KeyError) and err.args:  # str() of a KeyError quotes its message
        return str(err.args[0])
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


class IotuneWarning(UserWarning):
    """Base class of the warnings iotune gives; filter them with :mod:`warnings`.

    For example ``warnings.simplefilter("ignore", iotune.StripingWarning)`` in
    a notebook; the CLI shows them as ``iotune: warning: ...`` lines.
    """


class DeprecatedOptionWarning(IotuneWarning):
    """An option or a spec's parameter spelled the old way; it still works for one release."""


class PluginWarning(IotuneWarning):
    """An installed plugin could not be registered as it asked (a name iotune already uses)."""


class CostWarning(IotuneWarning):
    """A trial is predicted to take most of the sweep's time (``iotune plan`` shows why)."""


class StripingWarning(IotuneWarning):
    """Lustre striping was asked for, but the scratch file system is not Lustre."""
