"""How a sweep stops when it is told to: Ctrl-C, ``scancel``, a walltime, a closed terminal.

SIGINT, SIGTERM and SIGHUP all raise in the sweep's main thread (SIGINT as
:class:`KeyboardInterrupt`, the others as :class:`~iotune.core.errors.Interrupted`),
so the run unwinds the same way for each: the executor stops the processes
running trials, their scratch is removed once they are gone, the journal and
``results.nc`` keep every finished trial, and the output directory's lock is
released.  A second signal while that happens ends the process at once; its
workers die with it (``PR_SET_PDEATHSIG``) and the next run in the same place
removes the scratch they leave.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from iotune.core.errors import Interrupted

logger = logging.getLogger(__name__)
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _at_once(signum: int, frame: FrameType | None) -> None:
    logger.warning("%s again: stopping at once", signal.Signals(signum).name)
    os._exit(128 + signum)


def _unwind(signum: int, frame: FrameType | None) -> None:
    for sig in SIGNALS:  # a second signal during the clean-up stops at once
        signal.signal(sig, _at_once)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Interrupted(signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP unwind the sweep; restored afterwards.

    Outside the main thread (a sweep run from a worker thread) signals cannot
    be caught and the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.signal(sig, _unwind) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
