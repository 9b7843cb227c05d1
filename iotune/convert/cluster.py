"""Regions of a Zarr target written by the workers of a dask cluster.

Each region is a set of disjoint whole chunks (whole shards), so workers write them
at once without a lock.  The task opens the source itself (a worker may be on another
host; a Dataset is not sent): one file, or the files of a collection (a glob or a
list) combined as the calling process combined them, kept open by the worker for its
next regions.  It writes the stored values with zarr; the calling process keeps the
journal, one line per region as its task finishes, so ``--resume`` behaves as in a
serial run.

``--max-mem`` is per worker: each worker's regions are planned from it as a serial
run's are (:func:`iotune.convert.memory.data_budget`), and a LocalCluster's workers
get it as their ``memory_limit``.  The calling process holds the scheduler and, once
the workers are done, the verification's blocks (within the same budget).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from iotune.convert.blocks import index_of
from iotune.core.errors import UsageError

if TYPE_CHECKING:
    from iotune.backends.target import TargetPlan, TargetWriter
    from iotune.convert.journal import RegionJournal
    from iotune.convert.source import Source

logger = logging.getLogger(__name__)
#: a LocalCluster's workers: one per core, one thread each (the codec runs in the GIL-free C)
DEFAULT_WORKERS = max(1, min(4, os.cpu_count() or 1))


def connect(scheduler: str | None, *, workers: int, memory: int) -> Any:
    """A dask Client: of the scheduler at ``scheduler``, or of a LocalCluster of ``workers``.

    ``memory`` is each LocalCluster worker's ``memory_limit`` (``--max-mem``, per worker);
    a running scheduler's workers keep their own.

    Raises
    ------
    UsageError
        The scheduler cannot be reached.
    """
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            # not the default scheduler: the calling process computes (copies, verifies) itself
            return Client(scheduler, timeout="20s", set_as_default=False)
        except OSError as err:
            raise UsageError(f"--scheduler: {scheduler!r} cannot be reached ({err})") from err
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=max(memory, 2**28),  # dask pauses a worker at 80 %
        dashboard_address=":0",
    )
    return Client(cluster, set_as_default=False)


def write_region(
    sources: Sequence[str],
    target: str,
    parts: Sequence[tuple[str, tuple[slice, ...], dict[str, slice]]],
    *,
    writer: type[TargetWriter],
    plan: TargetPlan,
) -> int:
    """On a worker: copy each ``(name, index, key)`` part of ``sources`` into ``target``.

    ``sources`` is one file or store, or the files of a collection (opened as one
    dataset as :func:`iotune.convert.sources.open_sources` does).  ``target`` is
    reopened by its format's ``writer`` with the ``plan``'s settings (a Zarr store's
    ``write_empty_chunks``).  Returns the bytes written.
    """
    import dask
    import numpy as np

    from iotune.convert.journal import DELAY_ENV

    opened = _opened(tuple(sources))
    written = 0
    out = writer.reopen(Path(target), plan, opened.ds)
    try:
        # one thread per worker: a collection's dask reads stay in this task's thread
        with dask.config.set(scheduler="synchronous"):
            for name, index, key in parts:
                block = np.asarray(opened.ds[name].isel(key).values)
                out.write_block(name, index, block)
                written += block.nbytes
    finally:
        out.close()
    delay = float(os.environ.get(DELAY_ENV) or 0)
    if delay:  # a test's kill lands half-way
        time.sleep(delay)
    return written


#: the source a worker process has open: (key of its files, the Source)
_OPEN: dict[str, Any] = {}


def _opened(sources: tuple[str, ...]) -> Source:
    """``sources`` opened once per worker process (a collection's 64 files are not reopened
    per region); a changed file (size, mtime) or another source is opened afresh."""
    from iotune.convert.memory import uncached_source
    from iotune.convert.source import FILE
    from iotune.convert.sources import open_sources

    key = (sources, tuple(_stamp(s) for s in sources))
    if _OPEN.get("key") == key:
        return cast("Source", _OPEN["source"])
    if "source" in _OPEN:
        _OPEN.pop("source").close()
    opened = open_sources(list(sources) if len(sources) > 1 else sources[0])
    if opened.kind == FILE:
        uncached_source(opened.ds, list(opened.ds.variables))
    _OPEN.update(key=key, source=opened)
    return opened


def _stamp(source: str) -> tuple[int, int]:
    if "://" in source:
        return (0, 0)
    found = Path(source).stat()
    return (found.st_size, found.st_mtime_ns)


def sources_of(source: Source) -> list[str]:
    """What a worker opens: every file of a collection (in the order given), else the one."""
    if source.paths:
        return [str(p.resolve()) for p in source.paths]
    return [source.location()]


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
            sources_of(job.source),
            str(job.partial),
            parts,
            writer=job.layout.writer,
            plan=plan,
            pure=False,
        )
        pending[future] = region
    for future in as_completed(pending, loop=client.loop):  # the client is not the default
        region = pending[future]
        future.result()  # a failed region raises here; the journal keeps the others
        journal.written(region.index, region.start, region.stop, region.inner)
        if on_bytes is not None:
            on_bytes(job.bytes_of(region))
