"""Throttled requests retried with backoff, and every retry counted.

Object stores answer overload with ``503 SlowDown`` (S3), ``429 Too Many
Requests`` (GCS, Azure) or ``503 Service Unavailable``.  obstore's own retries
are turned off (:meth:`iotune.objectstore.target.Target.obstore`) so that
iotune retries here and the count reaches the results: a trial that was
throttled says so instead of looking slow.  s3fs's retries are botocore's, and
:mod:`iotune.objectstore.clients` reads their count from each response.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import TypeVar

from iotune.objectstore.meter import Meter

T = TypeVar("T")
#: attempts after the first, and the backoff between them (doubling, from 50 ms)
MAX_RETRIES = 8
FIRST_BACKOFF_S = 0.05
MAX_BACKOFF_S = 5.0
#: how obstore (object_store's status line and body) and botocore word a throttle
_THROTTLED = re.compile(
    r"SlowDown|\b503 (Service Unavailable|Slow Down)|\b429 Too Many Requests|status: (503|429)\b"
)


def throttled(err: BaseException) -> bool:
    """Whether ``err`` is a store's "slow down" answer, worth retrying.

    obstore raises its own exception classes (not ``OSError``) with the status
    line and body in the message, so the message decides.
    """
    return bool(_THROTTLED.search(str(err)))


async def retrying(call: Callable[[], Awaitable[T]], meter: Meter | None) -> T:
    """Await ``call()``, again after a backoff while the store throttles it."""
    delay = FIRST_BACKOFF_S
    for attempt in range(MAX_RETRIES + 1):
        try:
            return await call()
        except Exception as err:
            if not throttled(err) or attempt == MAX_RETRIES:
                raise
            if meter is not None:
                meter.retried()
        await asyncio.sleep(delay)
        delay = min(2 * delay, MAX_BACKOFF_S)
    raise AssertionError("unreachable")  # the loop returns or raises


def retrying_sync(call: Callable[[], T], meter: Meter | None) -> T:
    """:func:`retrying` for a blocking call."""
    import time

    delay = FIRST_BACKOFF_S
    for attempt in range(MAX_RETRIES + 1):
        try:
            return call()
        except Exception as err:
            if not throttled(err) or attempt == MAX_RETRIES:
                raise
            if meter is not None:
                meter.retried()
        time.sleep(delay)
        delay = min(2 * delay, MAX_BACKOFF_S)
    raise AssertionError("unreachable")
