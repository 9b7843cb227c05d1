"""The virtual backend's knobs, declared once with the library's defaults.

The base class and the rules: :mod:`iotune.backends.knobs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.backends.knobs import Knobs


@dataclass(frozen=True)
class VirtualKnobs(Knobs):
    """VirtualiZarr's references to the source: their form, what they inline, the dask read."""

    #: kerchunk JSON, kerchunk Parquet, or an Icechunk repository of virtual chunks
    reference: str = "kerchunk-json"
    #: chunks smaller than this many bytes are copied into kerchunk references
    #: (VirtualiZarr inlines none; kerchunk's own translators default to 500)
    inline_threshold: int = 0
    dask_chunks: str | None = None
    dask_threads: int | None = None
