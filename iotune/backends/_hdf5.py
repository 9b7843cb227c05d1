"""What the two HDF5-based backends (netCDF4 and h5py) resolve alike.

Both store one chunked or contiguous dataset through an HDF5 library, so the
rules for what applies are the same: compression needs chunks, a chunk cache
means nothing without them, and ``nprocs > 1`` needs a parallel build.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from iotune import codecs
from iotune.errors import NotApplicable
from iotune.units import chunk_label


def resolve_layout(
    params: Mapping[str, Any], parallel_support: Callable[[], tuple[bool, str]]
) -> tuple[codecs.Codec, dict[str, Any], list[str]]:
    """The codec, the effective parameters and the notes of an HDF5 dataset's layout.

    Parameters
    ----------
    params
        The trial's parameters (``chunks``, ``codec``, ``level``, ``shuffle``,
        ``chunk_cache``, ``nprocs``; any may be missing).
    parallel_support
        The backend's ``parallel_support``; asked only when ``nprocs > 1``.

    Raises
    ------
    NotApplicable
        For parallel trials without a parallel build, and for compression on
        contiguous storage.  ``nprocs`` itself is the backend's to resolve.
    """
    # nprocs 1 is these backends' serial trial
    if params.get("nprocs", 1) > 1:
        parallel, why = parallel_support()
        if not parallel:
            raise NotApplicable(f"nprocs > 1: {why}")
    chunks = chunk_label(params.get("chunks", "auto"))
    codec, notes = codecs.resolve_params(params)
    if codec.name != "none" and chunks == "contiguous":
        raise NotApplicable("compression needs chunked storage; 'contiguous' has none")
    cache = params.get("chunk_cache")
    if cache is not None and chunks == "contiguous":
        notes.append("chunk_cache does not apply to contiguous storage")
        cache = None
    effective = {
        "chunks": chunks,
        "codec": codec.name,
        "level": codec.level,
        "shuffle": codec.shuffle,
        "chunk_cache": cache,
    }
    return codec, effective, notes
