"""The memory backend's knobs, declared once with the library's defaults.

The base class and the rules: :mod:`iotune.backends.knobs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.backends.knobs import LayoutKnobs


@dataclass(frozen=True)
class MemoryKnobs(LayoutKnobs):
    """The memory backend's knobs: a layout compressed by numcodecs, with no file."""
