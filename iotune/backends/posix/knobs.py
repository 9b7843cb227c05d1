"""The posix backend's knobs, declared once with the library's defaults.

The base class and the rules: :mod:`iotune.backends.knobs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.backends.knobs import Knobs


@dataclass(frozen=True)
class PosixKnobs(Knobs):
    """The POSIX backend's knobs (IOR's and fio's)."""

    transfer_size: int = 2**20
    preallocate: str = "off"
    direct: str = "off"
    fadvise: str = "none"
    sync: str = "fsync"
