"""The h5py backend's knobs, declared once with the library's defaults.

The base class and the rules: :mod:`iotune.backends.knobs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.backends.knobs import LayoutKnobs


@dataclass(frozen=True)
class H5pyKnobs(LayoutKnobs):
    """h5py's knobs: the layout, parallel HDF5 and its hints, file and cache properties."""

    chunk_cache: int | None = None
    nprocs: int = 1
    io: str = "collective"
    hints: str | None = None
    stripe_count: int | None = None
    stripe_size: int | None = None
    cb_nodes: int | None = None
    cb_buffer_size: int | None = None
    stripe_count_hint: int | None = None
    stripe_size_hint: int | None = None
    alignment: int | None = None
    alignment_threshold: int = 1
    meta_block_size: int | None = None
    sieve_buf_size: int | None = None
    libver: str | None = None
    page_size: int | None = None
    page_buffer: int | None = None
    fill_time: str | None = None
    alloc_time: str | None = None
    cache_slots: int | None = None
    #: HDF5's chunk cache preemption (w0) when a cache is set
    cache_preemption: float = 0.75
    dask_chunks: str | None = None
    dask_threads: int | None = None
