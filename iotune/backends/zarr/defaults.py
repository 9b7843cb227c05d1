"""zarr-python's own chunk guess (the ``library`` baseline of a sweep)."""

from __future__ import annotations

from iotune.model.codecs import Codec
from iotune.model.spec import Workload


def zarr_default_chunks(workload: Workload, codec: Codec | None = None) -> tuple[int, ...]:
    """zarr-python's chunk guess: the ``.chunks`` of an array created without ``chunks``."""
    import zarr
    from zarr.storage import MemoryStore

    array = zarr.create_array(store=MemoryStore(), shape=workload.shape, dtype=workload.dtype)
    return tuple(int(c) for c in array.chunks)
