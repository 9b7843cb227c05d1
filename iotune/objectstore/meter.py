"""What a trial's requests to an object store cost: counts, bytes, first-byte times, retries.

On object storage a request pays 10-200 ms before its first byte, so the
number of requests and the bytes they move decide speed and price as much as
throughput does.  One :class:`Meter` follows one timed step (a write, a read):
the clients of :mod:`iotune.objectstore.clients` record each request in it as
it completes, from whichever thread runs their event loop.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: request kinds as a price list names them
KINDS = ("GET", "PUT", "HEAD", "LIST", "DELETE", "POST")


@dataclass
class Meter:
    """Requests of one timed step, recorded as they complete (thread-safe)."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    #: response bodies received (GET) and request bodies sent (PUT, parts)
    bytes_in: int = 0
    bytes_out: int = 0
    #: seconds from sending a GET to its response headers, one per GET where observable
    ttfb: list[float] = field(default_factory=list)
    #: requests sent again after throttling (503 SlowDown, 429) or a dropped connection
    retries: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(
        self,
        kind: str,
        *,
        count: int = 1,
        received: int = 0,
        sent: int = 0,
        ttfb: float | None = None,
        retries: int = 0,
    ) -> None:
        """Add ``count`` completed requests of ``kind`` (one of :data:`KINDS`)."""
        if kind not in self.counts:
            raise ValueError(f"request kind {kind!r}; allowed: {', '.join(KINDS)}")
        with self._lock:
            self.counts[kind] += count
            self.bytes_in += received
            self.bytes_out += sent
            self.retries += retries
            if ttfb is not None:
                self.ttfb.append(ttfb)

    def retried(self, count: int = 1) -> None:
        """Count requests that had to be sent again."""
        with self._lock:
            self.retries += count

    @property
    def requests(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> dict[str, Any]:
        """The figures a trial's write or read entry carries (JSON-friendly)."""
        with self._lock:
            ttfb = np.asarray(self.ttfb) * 1e3
            return {
                "requests": dict(self.counts),
                "bytes_in": self.bytes_in,
                "bytes_out": self.bytes_out,
                "retries": self.retries,
                "ttfb_ms_median": float(np.median(ttfb)) if ttfb.size else float("nan"),
                "ttfb_ms_p99": float(np.percentile(ttfb, 99)) if ttfb.size else float("nan"),
                "ttfb_samples": int(ttfb.size),
            }
