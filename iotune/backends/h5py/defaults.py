"""h5py's own chunk guess (the ``library`` baseline of a sweep)."""

from __future__ import annotations

from iotune.model.codecs import Codec
from iotune.model.spec import Workload


def h5py_guess_chunks(workload: Workload, codec: Codec | None = None) -> tuple[int, ...]:
    """h5py's chunk guess: the ``.chunks`` of a dataset created with ``chunks=True``."""
    import h5py

    with h5py.File("default.h5", "w", driver="core", backing_store=False) as f:
        ds = f.create_dataset("data", shape=workload.shape, dtype=workload.dtype, chunks=True)
        return tuple(int(c) for c in ds.chunks)
