"""Regions of a Zarr target written by the workers of a dask cluster.

Each region is a set of disjoint whole chunks (whole shards), so workers write them
at once without a lock.  The task opens the source itself (a worker may be on another
host; a Dataset is not sent) and writes the stored values with zarr; the calling
process keeps the journal, one line per region as its task finishes, so ``--resume``
behaves as in a serial run.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.convert.blocks import index_of
from iotune.core.errors import UsageError

if TYPE_CHECKING:
    from iotune.backends.target import TargetPlan, TargetWriter
    from iotune.convert.journal import RegionJournal

logger = logging.getLogger(__name__)
#: a LocalCluster's workers: one per core, one thread each (the codec runs in the GIL-free C)
DEFAULT_WORKERS = max(1, min(4, os.cpu_count() or 1))


def connect(scheduler: str | None, *, workers: int, memory: int) -> Any:
    """A dask Client: of the scheduler at ``scheduler``, or of a LocalCluster of ``workers``.

    Raises
    ------
    UsageError
        The scheduler cannot be reached.
    """
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="20s")
        except OSError as err:
            raise UsageError(f"--scheduler: {scheduler!r} cannot be reached ({err})") from err
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=max(memory // workers, 2**28),
        dashboard_address=":0",
    )
    return Client(cluster)


def write_region(
    source: str,
    target: str,
    parts: Sequence[tuple[str, tuple[slice, ...], dict[str, slice]]],
    *,
    writer: type[TargetWriter],
    plan: TargetPlan,
) -> int:
    """On a worker: copy each ``(name, index, key)`` part of ``source`` into ``target``.

    ``target`` is reopened by its format's ``writer`` with the ``plan``'s settings (a
    Zarr store's ``write_empty_chunks``).  Returns the bytes written.
    """
    import numpy as np

    from iotune.convert.source import open_source

    opened = open_source(source)
    written = 0
    try:
        out = writer.reopen(Path(target), plan, opened.ds)
        for name, index, key in parts:
            block = np.asarray(opened.ds[name].isel(key).values)
            out.write_block(name, index, block)
            written += block.nbytes
        out.close()
    finally:
        opened.close()
    return written


def write_on_cluster(
    job: Any,  # a convert.Job (not imported: convert imports this module)
    journal: RegionJournal,
    client: Any,
    *,
    on_bytes: Callable[[int], None] | None = None,
) -> None:
    """Every region not in ``journal`` as a task; each journalled as it finishes."""
    from distributed import as_completed

    from iotune.convert.targets import plan_of

    plan = plan_of(job.source, job.layout, job.converted)
    pending: dict[Any, Any] = {}
    for region in job.regions:
        if region.index in journal.done:
            continue
        parts = []
        for name in sorted(job.by_region):
            key = job.key(region, name)
            if key is not None:
                parts.append((name, index_of(job.source.ds[name].dims, key), key))
        future = client.submit(
            write_region,
            str(job.source.path),
            str(job.partial),
            parts,
            writer=job.layout.writer,
            plan=plan,
            pure=False,
        )
        pending[future] = region
    for future in as_completed(pending):
        region = pending[future]
        future.result()  # a failed region raises here; the journal keeps the others
        journal.written(region.index, region.start, region.stop, region.inner)
        if on_bytes is not None:
            on_bytes(job.bytes_of(region))
