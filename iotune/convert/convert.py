"""One conversion: pre-flight checks, the partial target, regions, verification, the rename.

Nothing is created until every check has passed (source readable, variables of the
right dimensions, the configuration applicable, the target free, room enough).  The
target is written as ``TARGET.iotune-partial`` with a journal ``TARGET.iotune-journal``
beside it; it takes its name only once every region is written and verified.  The
journal stays beside the target as the record of what was written.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iotune.backends.target import TargetWriter
from iotune.convert.blocks import Blocks, index_of, plan
from iotune.convert.engines import Engine
from iotune.convert.journal import DELAY_ENV, RegionJournal, finished_report
from iotune.convert.layout import Layout, check_dtype
from iotune.convert.lossy import Tolerance, check_variable, tolerance_of
from iotune.convert.memory import WRITE_CACHE_BYTES, uncached_source
from iotune.convert.pipeline import write_chunks
from iotune.convert.regions import Region
from iotune.convert.report import ApplyReport, describe
from iotune.convert.source import FILE, Source, disk_bytes, select_variables
from iotune.convert.sources import SourceLike, open_sources
from iotune.convert.targets import open_target
from iotune.convert.verify import VERIFY_MODES, verify
from iotune.convert.whole import Rows, copy_whole, plan_whole
from iotune.core.errors import UsageError
from iotune.core.units import format_size
from iotune.model.quantize import ErrorMeter

logger = logging.getLogger(__name__)
DEFAULT_MAX_MEM = 2**30


@dataclass
class Job:
    """A checked conversion: what to write where, before anything is created."""

    source: Source
    target: Path
    layout: Layout
    converted: list[str]
    by_region: set[str]
    whole: list[str]
    region_dim: str
    regions: list[Region]
    #: bytes of one row of the region dimension over the variables written by region
    row_bytes: int = 0
    #: the variables in ``whole``, in blocks of rows of their own first dimension
    whole_blocks: dict[str, list[Rows]] = field(default_factory=dict)
    #: the error verification allows the quantised (converted) variables; None: lossless
    tolerance: Tolerance | None = None
    #: how the regions cut each variable (None: rows of the region dimension only)
    blocks: Blocks | None = None
    #: resuming a conversion that finished (verified, renamed): its journal's report
    finished: dict[str, Any] | None = None
    #: the engine chosen for it (:func:`iotune.convert.engines.choose`); None: the regions
    engine: Engine | None = None

    @property
    def total_bytes(self) -> int:
        """The bytes the regions write (the progress bar's total)."""
        return sum(self.bytes_of(r) for r in self.regions)

    def bytes_of(self, region: Region) -> int:
        """The bytes one region writes."""
        if self.blocks is not None:
            return self.blocks.bytes_of(region)
        return self.row_bytes * (region.stop - region.start)

    def key(self, region: Region, name: str) -> dict[str, slice] | None:
        """The part of variable ``name`` that ``region`` writes (None: nothing)."""
        if self.blocks is None:
            return {self.region_dim: slice(region.start, region.stop)}
        return self.blocks.key(region, name, tuple(map(str, self.source.ds[name].dims)))

    @property
    def partial(self) -> Path:
        return self.target.with_name(self.target.name + ".iotune-partial")

    @property
    def journal(self) -> Path:
        return self.target.with_name(self.target.name + ".iotune-journal")

    def describe(self) -> dict[str, Any]:
        """The journal's header: a resumed run must be the same job."""
        header: dict[str, Any] = {
            "source": self.source.location(),
            "settings": self.layout.text(),
            "variables": self.converted,
            # [start, stop] per region, or [start, stop, lo, hi] for blocks of two dimensions
            "regions": [[v for pair in r.bounds for v in pair] for r in self.regions],
        }
        if self.source.paths:  # several files: every one, in the order given
            header["sources"] = [str(p.resolve()) for p in self.source.paths]
        return header


def prepare(
    source_path: SourceLike | Sequence[SourceLike],
    target: str | os.PathLike[str],
    layout: Layout,
    *,
    variables: Sequence[str] | None = None,
    max_mem: int = DEFAULT_MAX_MEM,
    resume: bool = False,
    overwrite: bool = False,
    max_error: float | None = None,
    min_digits: int | None = None,
) -> Job:
    """Every pre-flight check, creating nothing.

    ``max_error`` (absolute) and ``min_digits`` tighten the error verification allows
    a quantised layout (see :mod:`iotune.convert.lossy`).

    Raises
    ------
    UsageError
        The target exists (without ``overwrite``), the source is unreadable, its
        variables do not match the configuration, it does not apply to their dtype,
        one row of chunks exceeds ``max_mem``, or the target's file system lacks room.
        A target on an object store: :func:`iotune.convert.store_convert.prepare_any`.
    """
    where = Path(target)
    if where.exists() and not (overwrite or resume):
        raise UsageError(f"target {where} exists; pass --overwrite to replace it")
    if not where.parent.is_dir():
        raise UsageError(f"target {where}: the directory {where.parent} does not exist")
    source = open_sources(source_path)
    try:
        job = _job(source, where, layout, variables, max_mem)
        job.tolerance = tolerance_of(layout.lossy, max_error=max_error, min_digits=min_digits)
        if where.exists() and not overwrite:  # resumed: only a conversion of this job's
            job.finished = _finished(job)
            return job
        partial = job.partial
        if partial.exists() and not (resume or overwrite):
            raise UsageError(
                f"{partial} holds an interrupted conversion; pass --resume to finish it "
                "or --overwrite to start again"
            )
        _room(job, kept=disk_bytes(partial) if resume and partial.exists() else 0)
    except BaseException:
        source.close()
        raise
    return job


def _finished(job: Job) -> dict[str, Any]:
    """The report of the finished conversion the target beside its journal is, else refuse."""
    found = finished_report(job.journal, job=job.describe())
    if found is None:
        raise UsageError(
            f"target {job.target} exists and {job.journal.name} beside it records no "
            "finished conversion of this source and configuration; pass --overwrite to replace it"
        )
    return found


def _job(
    source: Source, target: Path, layout: Layout, names: Sequence[str] | None, max_mem: int
) -> Job:
    ds = source.ds
    ndim = None if layout.dims or isinstance(layout.chunks, str) else len(layout.chunks)
    converted = select_variables(ds, dims=layout.dims, names=names, ndim=ndim)
    for name in converted:
        check_dtype(layout, ds[name].dtype, name)
        check_variable(layout.lossy, layout.backend, name, ds[name].dtype, dict(ds[name].attrs))
        layout.chunks_for(tuple(map(str, ds[name].dims)), ds[name].shape)
    region_dim = str(ds[converted[0]].dims[0])
    by_region = {str(n) for n, v in ds.variables.items() if v.ndim and v.dims[0] == region_dim}
    whole = [str(n) for n in ds.variables if n not in by_region]
    whole_blocks = plan_whole(ds, whole, max_mem=max_mem)
    first = layout.chunks_for(tuple(map(str, ds[converted[0]].dims)), ds[converted[0]].shape)
    shards = layout.shards_for(tuple(map(str, ds[converted[0]].dims)), ds[converted[0]].shape)
    # a region holds whole shards: a shard written by two regions is rewritten twice
    chunks = shards or (first if isinstance(first, tuple) else ())
    blocks = plan(ds, converted, by_region, chunks=chunks, max_mem=max_mem)
    job = Job(
        source,
        target,
        layout,
        converted,
        by_region,
        whole,
        region_dim,
        blocks.regions,
        blocks.row_bytes,
        blocks=blocks,
    )
    job.whole_blocks = whole_blocks
    return job


def _room(job: Job, *, kept: int) -> None:
    """Refuse a target its file system cannot hold (raw size; the source's if compressed)."""
    raw = sum(v.dtype.itemsize * math.prod(v.shape) for v in job.source.ds.variables.values())
    need = raw if job.layout.codec.name == "none" else min(raw, job.source.nbytes())
    free = shutil.disk_usage(job.target.parent).free
    if need - kept > free:
        raise UsageError(
            f"target {job.target}: needs about {format_size(need - kept)}, "
            f"its file system has {format_size(free)} free"
        )


def convert(
    job: Job,
    *,
    resume: bool = False,
    overwrite: bool = False,
    verify_mode: str = "sample",
    on_bytes: Callable[[int], None] | None = None,
    client: Any = None,
) -> ApplyReport:
    """Write, verify and rename a prepared :class:`Job`; return what changed.

    ``on_bytes`` is called with the bytes of each region as it is written, and first
    with those of the regions an interrupted run wrote (a progress bar's updates).
    With a dask ``client``, the regions of a Zarr target are written by its workers
    (:mod:`iotune.convert.cluster`).

    Raises
    ------
    VerificationError
        The target differs from the source (the partial target is kept).
    """
    if verify_mode not in VERIFY_MODES:
        raise UsageError(f"--verify: {verify_mode!r}; allowed: {', '.join(VERIFY_MODES)}")
    if job.finished is not None:  # written, verified and renamed by an earlier run
        job.source.close()
        return ApplyReport(**(job.finished | {"state": "finished", "after": None}))
    began = time.monotonic()
    try:
        journal, target = _start(job, resume=resume, overwrite=overwrite)
        _caches(job, target)
        skipped = len(journal.done)
        try:
            if on_bytes is not None:
                on_bytes(sum(job.bytes_of(r) for r in job.regions if r.index in journal.done))
            if client is not None and target.parallel_regions:
                from iotune.convert.cluster import write_on_cluster

                write_on_cluster(job, journal, client, on_bytes=on_bytes)
            elif job.engine is not None and job.engine.name == "pipeline":
                delay = float(os.environ.get(DELAY_ENV) or 0)
                write_chunks(job, target, journal, on_bytes=on_bytes, delay=delay)
            else:
                _write(job, target, journal, on_bytes)
            checked, meters = _verify(job, target, verify_mode)
            storage = {name: target.storage(name) for name in job.converted}
            # what a reader sets is said apart (Layout.reading_lines), not as the file's
            applied = target.applied() or {}
            properties = {k: v for k, v in applied.items() if k not in target.reader_side} or None
        finally:
            target.close()
        before = job.source.nbytes()
        _remove(job.target)
        job.partial.replace(job.target)
    finally:
        job.source.close()
    report = describe(
        job.source,
        job.target,
        settings=job.layout.text(),
        converted=job.converted,
        regions=len(job.regions),
        storage=storage,
        before=before,
        after=disk_bytes(job.target),
        skipped=skipped,
        checked=checked,
        verify_mode=verify_mode,
        seconds=time.monotonic() - began,
        tolerance=job.tolerance,
        errors={name: meter.result() for name, meter in meters.items()},
        file_properties=properties,
    )
    journal.finished(report.to_dict())  # after the rename: a target it names is this job's
    return report


def _verify(job: Job, target: TargetWriter, mode: str) -> tuple[int, dict[str, ErrorMeter]]:
    """The regions verified, and the largest errors per quantised variable."""
    meters: dict[str, ErrorMeter] = {}
    checked = verify(
        job.source,
        target.read,
        by_region=sorted(job.by_region),
        whole=job.whole,
        regions=job.regions,
        region_dim=job.region_dim,
        mode=mode,
        whole_blocks=job.whole_blocks,
        tolerance=job.tolerance,
        lossy=job.converted,
        meters=meters,
        key=job.key,
        read_block=target.read_block,
    )
    return checked, meters


def _start(job: Job, *, resume: bool, overwrite: bool) -> tuple[RegionJournal, TargetWriter]:
    """The journal and the partial target: reopened to resume, else made afresh."""
    if overwrite and not resume:
        _remove(job.partial)
    again = resume and job.partial.exists() and job.journal.exists()
    journal = RegionJournal(job.journal, job=job.describe(), resume=again)
    try:
        fresh = not journal.done
        target = _open(job, fresh=fresh)
    except OSError as err:  # the partial file was torn by the crash: start again
        logger.warning("%s cannot be reopened (%s): writing every region again", job.partial, err)
        journal = RegionJournal(job.journal, job=job.describe(), resume=False)
        fresh, target = True, _open(job, fresh=True)
    if fresh:  # the variables outside the regions, before the first region's line
        copy_whole(job.source.ds, job.whole_blocks, target.write)
    return journal, target


def _open(job: Job, *, fresh: bool) -> TargetWriter:
    if fresh:
        _remove(job.partial)
    return open_target(job.partial, job.source, job.layout, job.converted, fresh=fresh)


def _caches(job: Job, target: TargetWriter) -> None:
    """HDF5 chunk caches from the plan: none where whole chunks are written or read."""
    if job.source.kind == FILE:
        uncached_source(job.source.ds, sorted(job.by_region))
    for name in job.converted:  # a format without chunk caches sets none
        target.set_write_cache(name, WRITE_CACHE_BYTES)


def _write(
    job: Job,
    target: TargetWriter,
    journal: RegionJournal,
    on_bytes: Callable[[int], None] | None,
) -> None:
    delay = float(os.environ.get(DELAY_ENV) or 0)
    for region in job.regions:
        if region.index in journal.done:
            continue
        for name in sorted(job.by_region):
            key = job.key(region, name)
            if key is not None:
                block = job.source.ds[name].isel(key)
                target.write_block(name, index_of(block.dims, key), block.values)
        target.sync()
        journal.written(region.index, region.start, region.stop, region.inner)
        if on_bytes is not None:
            on_bytes(job.bytes_of(region))
        if delay:
            time.sleep(delay)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
