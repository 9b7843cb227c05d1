"""iotune's messages: the ``iotune`` loggers, how the CLI shows them, quiet third parties.

Every module logs to ``logging.getLogger(__name__)``, below the ``iotune``
logger; nothing below the CLI prints.  A library installs no handler, so in a
notebook iotune's records go wherever the notebook's logging sends them (by
Python's default, warnings and errors to stderr) and its
:class:`~iotune.core.errors.IotuneWarning`\\s can be filtered with :mod:`warnings`.
The ``iotune`` command calls :func:`configure` once.
"""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from iotune.core.errors import IotuneWarning

LOGGER = "iotune"
#: the level shown for ``-q`` (-1), the default (0), ``-v`` (1), ``-vv`` (2)
LEVELS = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO, 2: logging.DEBUG}


class StderrHandler(logging.Handler):
    """Writes records to the ``sys.stderr`` of the moment (a test or a notebook may swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            stream: TextIO = sys.stderr
            stream.write(self.format(record) + "\n")
            stream.flush()
        except (OSError, ValueError):  # a closed stream (output piped into head)
            self.handleError(record)


def level_of(verbosity: int) -> int:
    """The logging level for a verbosity: ``-q`` is -1, ``-v`` 1, ``-vv`` (or more) 2."""
    return LEVELS[max(-1, min(2, verbosity))]


def configure(verbosity: int = 0) -> logging.Handler:
    """Show iotune's records and warnings on stderr as ``iotune: <message>`` lines.

    Calling it again replaces the handler and the level, so it is safe per
    command.  :class:`~iotune.core.errors.IotuneWarning`\\s become ``iotune: warning:
    <message>`` records of the ``iotune`` logger (hidden by ``-q``); other
    warnings keep Python's own display.

    Parameters
    ----------
    verbosity
        0: warnings and errors; 1 (``-v``): also information such as where the
        trials run; 2 (``-vv``): debugging; -1 (``-q``): errors only.

    Returns
    -------
    logging.Handler
        The handler installed on the ``iotune`` logger.
    """
    logger = logging.getLogger(LOGGER)
    for old in [h for h in logger.handlers if isinstance(h, StderrHandler)]:
        logger.removeHandler(old)
    handler = StderrHandler()
    handler.setFormatter(logging.Formatter("iotune: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level_of(verbosity))
    if not getattr(warnings.showwarning, "_iotune", False):
        warnings.showwarning = _showwarning(warnings.showwarning)
    return handler


def _showwarning(shown: Any) -> Any:
    """``warnings.showwarning`` that hands iotune's warnings to its logger."""

    def show(message: Warning | str, category: type[Warning], *args: Any, **kw: Any) -> None:
        if issubclass(category, IotuneWarning):
            logging.getLogger(LOGGER).warning("warning: %s", message)
        else:
            shown(message, category, *args, **kw)

    show._iotune = True  # type: ignore[attr-defined]
    return show


@contextmanager
def quiet(*names: str, level: int = logging.WARNING) -> Iterator[None]:
    """Within the block, the loggers ``names`` (``"optuna"``) show only ``level`` and above.

    A library's chatter (optuna's "Trial 3 finished", distributed's cluster
    start-up) is iotune's business only inside iotune's own calls; each
    logger's level is put back afterwards, so a notebook's own settings hold.
    A logger already quieter than ``level`` is left as it is.
    """
    saved = {}
    for name in names:
        logger = logging.getLogger(name)
        saved[name] = logger.level
        if logger.getEffectiveLevel() < level:
            logger.setLevel(level)
    try:
        yield
    finally:
        for name, old in saved.items():
            logging.getLogger(name).setLevel(old)
