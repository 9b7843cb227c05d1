"""How one measured run is done: where it writes, what it may discard, where its trials run.

:class:`RunOptions` is the one form these options travel in, from the command
line (``iotune run``, ``iotune tune``) and the notebook API (``iotune.run``,
``iotune.tune``) to the :class:`~iotune.app.session.Session`.  It is checked when
it is made, before anything is created; the paths themselves (writable, room on
scratch) are checked when the session starts.

Errors are :class:`~iotune.core.errors.UsageError` naming the option as the
command line spells it (``--workers: 0; allowed: ...``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from iotune.core.errors import UsageError
from iotune.specfile.overrides import execution_overrides

#: the executors ``--executor`` names (the spec's ``execution.executor``)
EXECUTORS = ("serial", "dask")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def parse_path(name: str, value: str | Path | None) -> Path | None:
    """A path option as a :class:`~pathlib.Path`; None stays None."""
    if value is None:
        return None
    if not isinstance(value, str | Path) or not str(value):
        raise UsageError(f"{_flag(name)}: {value!r}; allowed: a directory path")
    return Path(value)


def parse_count(name: str, value: int | str | None) -> int | None:
    """A whole number of at least 1 (``"3"`` from text too); None stays None."""
    if value is None:
        return None
    number: object = value
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value)
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise UsageError(f"{_flag(name)}: {value!r}; allowed: a whole number of at least 1")
    return number


def parse_executor(value: str | None) -> str | None:
    """``serial`` or ``dask``; None keeps the spec's."""
    if value is not None and value not in EXECUTORS:
        raise UsageError(f"--executor: {value!r}; allowed: {', '.join(EXECUTORS)}")
    return value


def parse_scheduler(value: str | None) -> str | None:
    """A running dask scheduler's address; None means none."""
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise UsageError(f"--scheduler: {value!r}; allowed: an address like tcp://host:8786")
    return value


def parse_switch(name: str, value: bool) -> bool:
    """A yes/no option: True or False, nothing that merely looks like one."""
    if not isinstance(value, bool):
        raise UsageError(f"{_flag(name)}: {value!r}; allowed: True or False")
    return value


@dataclass(frozen=True)
class RunOptions:
    """The options of a measured run (``iotune run``, ``iotune tune``), checked.

    Parameters
    ----------
    out
        Output directory; None: the command's default (``results/<name>``,
        ``results/<name>-tune``), set with :meth:`with_default_out`.
    resume
        Continue an interrupted run: finished trials in the journal are kept.
    overwrite
        Discard an earlier run's journal and results in ``out``; not with ``resume``.
    scratch
        Directory on the file system to measure (a fresh subdirectory of it);
        default ``out``.
    executor, workers, scheduler, per_host
        Override the spec's ``execution`` section (``"serial"`` or ``"dask"``; a
        LocalCluster's workers, a running scheduler's address, storage trials at
        once per host).  Workers, a scheduler or ``per_host`` without an executor
        mean dask.  None keeps the spec's.
    force
        Run even when the largest trial needs more room than scratch has.
    allow_large
        Allow grids (and grid searches) of more than 10,000 points.

    Raises
    ------
    UsageError
        A bad value or options that contradict; the message names the option, the
        value and what is allowed.
    """

    out: Path | None = None
    resume: bool = False
    overwrite: bool = False
    scratch: Path | None = None
    executor: str | None = None
    workers: int | None = None
    scheduler: str | None = None
    per_host: int | None = None
    force: bool = False
    allow_large: bool = False

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: the checked values replace those given
        for name in ("out", "scratch"):
            set_(self, name, parse_path(name, getattr(self, name)))
        for name in ("resume", "overwrite", "force", "allow_large"):
            parse_switch(name, getattr(self, name))
        for name in ("workers", "per_host"):
            set_(self, name, parse_count(name, getattr(self, name)))
        parse_executor(self.executor)
        parse_scheduler(self.scheduler)
        if self.resume and self.overwrite:
            raise UsageError("--resume and --overwrite contradict each other; choose one")

    def with_default_out(self, default: Path) -> RunOptions:
        """These options with ``out`` set to ``default`` when none was given."""
        return self if self.out is not None else replace(self, out=default)

    def execution_overrides(self) -> dict[str, Any]:
        """The dotted ``execution.*`` overrides of the spec these options make."""
        return execution_overrides(
            executor=self.executor,
            workers=self.workers,
            scheduler=self.scheduler,
            per_host=self.per_host,
        )
