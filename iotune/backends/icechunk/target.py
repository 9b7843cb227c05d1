"""The Icechunk apply target: the Zarr target written through a session, a commit per region.

The metadata and values go through the zarr target's code (:mod:`iotune.backends.zarr.target`)
into a writable session's store; :meth:`IcechunkTarget.sync`, which the conversion calls
after each finished region and before its journal says so, commits the session and
fsyncs the files the commit made (Icechunk's commit on local storage fsyncs none), so
the branch's history is the conversion, one durable commit per region.  An interrupted conversion
loses only the uncommitted region: resumed, the target reopens at the branch's last
commit and the journal names the regions it holds.  The repository keeps its
configuration (inline threshold, manifests, requests, cache), so it is carried.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from iotune.backends.icechunk import repository
from iotune.backends.target import TargetPlan
from iotune.backends.zarr.target import ZarrTarget, empty_chunks, stored_knobs, write_metadata

#: the first commit of a conversion: the metadata and the variables not written by region
METADATA_COMMIT = "iotune apply: metadata"


class IcechunkTarget(ZarrTarget):
    """The partial repository at ``path``, on its branch's writable session."""

    carried: ClassVar[tuple[str, ...]] = (*ZarrTarget.carried, *repository.CONFIG_KNOBS)
    suffixes = (".icechunk",)
    file_kind = "an Icechunk"
    measured = "the region copier: one writer, a commit per region"
    object_store = False
    #: one session commits: a cluster's workers would need Icechunk's forked sessions
    parallel_regions = False

    def __init__(self, path: Path, settings: Mapping[str, Any], repo: Any) -> None:
        super().__init__(path, settings)
        self._repo = repo
        self._rows: list[int] = []
        #: the repository's files fsynced by an earlier sync
        self._durable: set[Path] = set()
        with repository.quiet():
            self._session = repo.writable_session(repository.BRANCH)

    @classmethod
    def create(cls, path: Path, plan: TargetPlan, ds: Any) -> IcechunkTarget:
        """A new repository with the plan's configuration, its metadata committed."""
        target = cls(path, plan.settings, repository.create(path, plan.settings))
        with repository.quiet():
            write_metadata(target._session.store, plan, ds)
        target._commit(METADATA_COMMIT)
        return target

    @classmethod
    def reopen(cls, path: Path, plan: TargetPlan, ds: Any) -> IcechunkTarget:
        """The repository at its branch's last commit: an unfinished region is not in it
        (its chunk files, never referenced by a commit, stay as garbage Icechunk's
        ``expire_snapshots``/``garbage_collect`` would remove)."""
        return cls(path, plan.settings, repository.open_repository(path))

    def _array(self, name: str, mode: str) -> Any:
        import zarr

        with repository.quiet():
            return zarr.open_array(self._session.store, path=name, mode=mode)

    def write_block(self, name: str, index: tuple[slice, ...], values: np.ndarray) -> None:
        """A block of a region: its rows name the commit that holds it."""
        if index:
            self._rows += [index[0].start or 0, index[0].stop or 0]
        self._store(name, index, values)

    def write(self, name: str, start: int, stop: int, values: np.ndarray) -> None:
        """A variable outside the regions (coordinates): committed with the next region."""
        self._store(name, (slice(start, stop),) if values.ndim else (), values)

    def _store(self, name: str, index: tuple[slice, ...], values: np.ndarray) -> None:
        with repository.quiet():
            super().write_block(name, index, values)

    def read_block(self, name: str, index: tuple[slice, ...]) -> np.ndarray:
        with repository.quiet():
            return super().read_block(name, index)

    def read(self, name: str, start: int | None = None, stop: int | None = None) -> np.ndarray:
        with repository.quiet():
            return super().read(name, start, stop)

    def sync(self) -> None:
        """Commit what the session holds (the rows of the region just written) and fsync the
        files the commit made: Icechunk's commit on local storage fsyncs nothing."""
        rows = f"rows {min(self._rows)}:{max(self._rows)}" if self._rows else "values"
        self._commit(f"iotune apply: {rows}")
        self._durable = repository.fsync_new(self.path, self._durable)

    def _commit(self, message: str) -> None:
        with repository.quiet():
            if self._session.has_uncommitted_changes:
                self._session.commit(message)
            self._session = self._repo.writable_session(repository.BRANCH)
        self._rows = []

    def close(self) -> None:
        """What the session still holds (the variables outside the regions) is committed."""
        self._commit("iotune apply: the rest")

    @classmethod
    def read_back(cls, path: Path | str, variable: str) -> dict[str, Any]:
        """The array's chunks, shards, codec and quantisation, whether chunks equal to the
        fill value were stored (in the manifest: Icechunk has no file per chunk to look
        for), and the repository's configuration."""
        import zarr
        from zarr.core.sync import sync

        repo = repository.open_repository(Path(path))
        with repository.quiet():
            store = repo.readonly_session(repository.BRANCH).store
            array = zarr.open_array(store, path=variable, mode="r")
            found = stored_knobs(array)
            empty = empty_chunks(array, lambda key: sync(store.exists(f"{variable}/{key}")))
        if empty is not None:
            found["write_empty_chunks"] = empty
        config = repository.read_config(Path(path))
        return found | {k: v for k, v in config.items() if v is not None}

    @classmethod
    def reader_lines(cls, settings: Mapping[str, Any]) -> list[str]:
        """zarr's concurrency, then the repository opened by xarray through a session."""
        lines = [
            "import icechunk",
            "repo = icechunk.Repository.open(icechunk.local_filesystem_storage(path))",
            'store = repo.readonly_session("main").store',
        ]
        concurrency = settings.get("request_concurrency")
        if concurrency is not None:
            lines.insert(0, f"zarr.config.set({{'async.concurrency': {int(concurrency)}}})")
        keywords = {"consolidated": False, **cls.xarray_keywords(settings)}
        shown = ", ".join(f"{k}={v!r}" for k, v in keywords.items())
        lines.append(f"ds = xr.open_zarr(store, {shown})")
        if settings.get("dask_threads") is not None:
            threads = int(settings["dask_threads"])
            lines.append(f"dask.config.set(scheduler='threads', num_workers={threads})")
        return lines
