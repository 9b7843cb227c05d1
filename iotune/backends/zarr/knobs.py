"""The zarr backend's knobs, declared once with the library's defaults.

The base class and the rules: :mod:`iotune.backends.knobs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.backends.knobs import Knobs


@dataclass(frozen=True)
class ZarrKnobs(Knobs):
    """zarr-python 3's knobs: inner chunks, shards, codec, config."""

    chunks: str = "auto"
    shards: str = "none"
    codec: str = "none"
    level: int | None = None
    shuffle: str | None = None
    #: accepted for multi-format sweeps; zarr has no chunk cache
    chunk_cache: int | None = None
    request_concurrency: int | None = None
    #: iotune stores every chunk so sizes compare with the other formats (zarr: off)
    write_empty_chunks: str = "on"
    shard_index: str | None = None
    quantize: str = "off"
    dask_chunks: str | None = None
    dask_threads: int | None = None
