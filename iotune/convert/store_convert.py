"""``iotune apply`` to a target on an object store: a Zarr store written where it stays.

The checks of :func:`iotune.convert.convert.prepare` less the room check (a bucket
has no free space to compare with), with the store's own: the bucket exists, the
target is free or ``--overwrite`` is given, an interrupted conversion is only
resumed or restarted when asked.  A netCDF4 or HDF5 target on a store is refused: they
need a seekable file; write it locally and upload it, or write Zarr.

Objects have no rename, so the store is written at its final prefix with its root
``zarr.json`` held in ``TARGET.iotune-partial`` (:mod:`iotune.convert.stores`) and
PUT at ``TARGET/zarr.json`` once every region is written and verified.  With
``--overwrite`` the old target is removed when the conversion starts, not just
before the end as on a file system: the new one is written in its place.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from iotune.backends.target import TargetWriter
from iotune.convert.convert import (
    DEFAULT_MAX_MEM,
    Job,
    _job,
    _verify,
    _write,
    convert,
    prepare,
)
from iotune.convert.layout import Layout
from iotune.convert.lossy import tolerance_of
from iotune.convert.report import ApplyReport, describe
from iotune.convert.sources import SourceLike, open_sources
from iotune.convert.stores import Location, StoreJournal, is_url
from iotune.convert.targets import open_target
from iotune.convert.verify import VERIFY_MODES
from iotune.convert.whole import copy_whole
from iotune.core.errors import UsageError

PARTIAL = ".iotune-partial"
JOURNAL = ".iotune-journal"


@dataclass
class StoreJob(Job):
    """A checked conversion whose target is a Zarr store on an object store."""

    where: Any = None  # the target's Location

    @property
    def held(self) -> Location:
        """The object holding the root metadata until the target is complete."""
        return self.where.sibling(PARTIAL)

    @property
    def journal_at(self) -> Location:
        return self.where.sibling(JOURNAL)


def prepare_any(
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
    """:func:`prepare_store` for a target on an object store, else
    :func:`~iotune.convert.convert.prepare`."""
    options: dict[str, Any] = {
        "variables": variables,
        "max_mem": max_mem,
        "resume": resume,
        "overwrite": overwrite,
        "max_error": max_error,
        "min_digits": min_digits,
    }
    if is_url(target):
        return prepare_store(source_path, str(target), layout, **options)
    return prepare(source_path, target, layout, **options)


def convert_any(
    job: Job,
    *,
    resume: bool = False,
    overwrite: bool = False,
    verify_mode: str = "sample",
    on_bytes: Callable[[int], None] | None = None,
    client: Any = None,
) -> ApplyReport:
    """:func:`convert_store` for a :class:`StoreJob`, else
    :func:`~iotune.convert.convert.convert` (on ``client``'s dask cluster if given)."""
    if isinstance(job, StoreJob):
        return convert_store(job, resume=resume, verify_mode=verify_mode, on_bytes=on_bytes)
    return convert(
        job,
        resume=resume,
        overwrite=overwrite,
        verify_mode=verify_mode,
        on_bytes=on_bytes,
        client=client,
    )


def on_a_store(job: Job) -> bool:
    """Whether the job's source or target is on an object store."""
    return isinstance(job, StoreJob) or bool(job.source.url)


def prepare_store(
    source_path: SourceLike | Sequence[SourceLike],
    target: str,
    layout: Layout,
    *,
    variables: Sequence[str] | None,
    max_mem: int,
    resume: bool,
    overwrite: bool,
    max_error: float | None = None,
    min_digits: int | None = None,
) -> StoreJob:
    """Every pre-flight check for a target on a store, creating nothing.

    Raises
    ------
    UsageError
        The target is not Zarr, its bucket is missing, it exists (without
        ``overwrite``), an interrupted conversion is there (without ``resume`` or
        ``overwrite``), or a check of :func:`~iotune.convert.convert.prepare` fails.
    """
    if not layout.writer.object_store:
        raise UsageError(
            f"-o {target}: backend {layout.backend} writes a local file only (netCDF and "
            "HDF5 need a seekable file); write it locally and upload it, or write Zarr "
            "(a .zarr target or --settings backend=zarr)"
        )
    where = Location.of(target, flag="-o")
    held = where.sibling(PARTIAL)
    interrupted = held.is_object()
    if interrupted and not (resume or overwrite):
        raise UsageError(
            f"{held.url} holds an interrupted conversion; pass --resume to finish it "
            "or --overwrite to start again"
        )
    if not interrupted and where.exists() and not overwrite:
        raise UsageError(f"target {where.url} exists; pass --overwrite to replace it")
    source = open_sources(source_path)
    try:
        job = _job(source, Path(where.path), layout, variables, max_mem)
        job.tolerance = tolerance_of(layout.lossy, max_error=max_error, min_digits=min_digits)
    except BaseException:
        source.close()
        raise
    return StoreJob(**{f.name: getattr(job, f.name) for f in fields(Job)}, where=where)


def convert_store(
    job: StoreJob,
    *,
    resume: bool = False,
    verify_mode: str = "sample",
    on_bytes: Callable[[int], None] | None = None,
) -> ApplyReport:
    """Write, verify and complete a prepared :class:`StoreJob`; return what changed.

    Raises
    ------
    VerificationError
        The target differs from the source (it stays incomplete and resumable).
    """
    from zarr.storage import StorePath

    if verify_mode not in VERIFY_MODES:
        raise UsageError(f"--verify: {verify_mode!r}; allowed: {', '.join(VERIFY_MODES)}")
    began = time.monotonic()
    try:
        again = resume and job.held.is_object() and job.journal_at.exists()
        journal = StoreJournal(job.journal_at, job=job.describe(), resume=again)
        skipped = len(journal.done)
        root = StorePath(job.where.zarr_store(read_only=False, held=job.held))
        if journal.done:
            target = open_target(root, job.source, job.layout, job.converted, fresh=False)  # type: ignore[arg-type]
        else:  # nothing of this job is written: the old target or partial store goes
            job.where.remove()
            job.held.remove()
            target = _create(job, root)
            copy_whole(job.source.ds, job.whole_blocks, target.write)
        if on_bytes is not None:
            on_bytes(sum(job.bytes_of(r) for r in job.regions if r.index in journal.done))
        _write(job, target, journal, on_bytes)
        checked, meters = _verify(job, target, verify_mode)
        storage = {name: target.storage(name) for name in job.converted}
        before = job.source.nbytes()
        # complete: the root metadata last, so the store opens only now
        job.where.sibling("/zarr.json").write_bytes(job.held.read_bytes())
        job.held.remove()
        after = job.where.nbytes()
    finally:
        job.source.close()
        job.where.close()
    return describe(
        job.source,
        job.where.url,
        settings=job.layout.text(),
        converted=job.converted,
        regions=len(job.regions),
        storage=storage,
        before=before,
        after=after,
        skipped=skipped,
        checked=checked,
        verify_mode=verify_mode,
        seconds=time.monotonic() - began,
        tolerance=job.tolerance,
        errors={name: meter.result() for name, meter in meters.items()},
    )


def _create(job: StoreJob, root: Any) -> TargetWriter:
    return open_target(root, job.source, job.layout, job.converted, fresh=True)
