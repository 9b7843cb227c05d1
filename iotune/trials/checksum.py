"""The checksum that proves the bytes read back are the bytes written.

CRC-32C (Castagnoli) computed with the CPU's own instruction (SSE 4.2, ARMv8
CRC) by the ``crc32c`` package: 15 GB/s on this project's test machine, where
zlib's CRC-32 does 3.4 GB/s.  The speed is part of the measurement, not only of
the sweep's wall time: the checksum of a slab runs in the untimed pause between
two timed reads, and during a pause the kernel's readahead goes on off the
clock.  On a quiet machine, 30 ms pauses per 32 MiB read made cold reads
look 9-19 % faster; zlib's checksum paused 10 ms per 32 MiB, this one 2 ms
(benchmarks/read_pauses.py, docs/benchmarks.md "Fidelity against fio").
"""

from __future__ import annotations

from typing import Any

import numpy as np


def checksum(data: Any, value: int = 0) -> int:
    """CRC-32C of ``data`` (an array or a bytes-like object), continuing from ``value``.

    Parameters
    ----------
    data
        A numpy array (made C-contiguous if it is not) or anything exposing the
        buffer protocol.
    value
        The checksum of the bytes before these, to checksum a stream piece by piece.
    """
    import crc32c

    if isinstance(data, np.ndarray):
        data = memoryview(np.ascontiguousarray(data)).cast("B")
    return crc32c.crc32c(data, value)


def hardware() -> bool:
    """Whether the checksum runs on the CPU's CRC instruction (else ~20x slower)."""
    import crc32c

    return bool(crc32c.hardware_based)
