"""Zarr format 3 arrays in an Icechunk repository on local storage.

The repository is a directory holding a group with one array named ``data`` (as
the zarr backend's store), written by zarr-python through a writable session with
the zarr backend's own writer and committed once when the writer closes: a trial
is one commit.  Every read opens the repository afresh (a new session, so
Icechunk's caches start empty) and the runner evicts every file of the directory
before a cold read.

Durability: a commit on local storage writes the chunks, manifests and snapshot as
files and then moves the branch's ref; it makes the new snapshot visible at once
(readers see the old one or the new one) but calls no fsync, so the files may still
sit in the page cache.  The runner therefore fsyncs every file of the repository
after the writer closes, as it does for a Zarr store (``syncs`` is false).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iotune.backends.base import Reader, SlabBackend, Writer, check_properties
from iotune.backends.exports_base import Target, is_set, launch_makers, make_all
from iotune.backends.icechunk import repository
from iotune.backends.icechunk.exports import icechunk_code
from iotune.backends.icechunk.knobs import IcechunkKnobs
from iotune.backends.layout_exports import layout_makers
from iotune.backends.xarray_exports import zarr_export
from iotune.backends.xarray_open import Chunks
from iotune.backends.zarr.backend import (
    VARIABLE,
    ZarrBackend,
    _row,
    _ZarrReader,
    _ZarrWriter,
    open_zarr_dataset,
    verify_array,
)
from iotune.backends.zarr.exports import zarr_config_code
from iotune.core.errors import VerificationError
from iotune.model.codecs import ZARR_PYTHON
from iotune.model.readers import ReaderGroup
from iotune.model.spec import StorageSpec, Workload

#: the commit a trial's writer makes
TRIAL_COMMIT = "iotune: trial"


class _IcechunkWriter(_ZarrWriter):
    """The zarr backend's writer on a writable session's store, committed on close."""

    def __init__(
        self, session: Any, workload: Workload, params: Mapping[str, Any], *, row: int | None
    ) -> None:
        self._session = session
        with repository.quiet():
            super().__init__(session.store, workload, params, row=row)

    def close(self) -> None:
        with repository.quiet():
            self.flush()
            self._session.commit(TRIAL_COMMIT)


def _array(path: Path) -> Any:
    """The committed ``data`` array, from a new read-only session."""
    import zarr

    repo = repository.open_repository(path)
    with repository.quiet():
        store = repo.readonly_session(repository.BRANCH).store
        return zarr.open_array(store, path=VARIABLE, mode="r", zarr_format=3)


class IcechunkBackend(SlabBackend):
    """Zarr arrays (chunks, shards, codecs as the zarr backend) in an Icechunk repository.

    ``inline_chunk_threshold`` keeps smaller chunks in the manifest,
    ``manifest_split`` splits the array's manifest every that many chunks along the
    first dimension, ``manifest_preload`` on loads every manifest as a session opens,
    ``max_concurrent_requests`` bounds Icechunk's requests to storage and
    ``chunk_cache`` is the bytes of chunks Icechunk caches; the repository keeps them
    all in its configuration.
    """

    name = "icechunk"
    default_chunks = "iotune.backends.zarr.defaults:zarr_default_chunks"
    library = "icechunk"
    extra = "virtual"
    suffix = ".icechunk"
    knobs = IcechunkKnobs
    target_writer = "iotune.backends.icechunk.target:IcechunkTarget"
    parameters = IcechunkKnobs.names()
    description = "Zarr format 3 arrays in an Icechunk repository (one commit per trial)"
    readers = (ReaderGroup(ZARR_PYTHON, ("icechunk-python",)),)

    def __init__(self) -> None:
        import zarr.codecs  # noqa: F401 - out of the first trial's timed open_writer

    @classmethod
    def guess_can_open(cls, path: str | Path) -> bool:
        """Whether ``path`` is a local directory holding an Icechunk repository."""
        return repository.is_repository(Path(path))

    @classmethod
    def open_source(cls, path: Path) -> Any:
        """The branch's last commit as an undecoded Dataset (``iotune apply``'s source)."""
        import xarray as xr

        repo = repository.open_repository(path)
        with repository.quiet():
            store = repo.readonly_session(repository.BRANCH).store
            return xr.open_zarr(store, decode_cf=False, chunks=None, consolidated=False)

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        """The zarr backend's effective values, then the repository's knobs as given."""
        own = repository.CONFIG_KNOBS
        effective, notes = ZarrBackend.resolve(
            {k: v for k, v in params.items() if k not in own}, workload
        )
        notes = [n for n in notes if not n.startswith("chunk_cache")]
        defaults = IcechunkKnobs.defaults()
        effective |= {k: params.get(k, defaults[k]) for k in own}
        return effective, notes

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        repo = repository.create(path, params)
        with repository.quiet():
            session = repo.writable_session(repository.BRANCH)
        writer = _IcechunkWriter(session, workload, params, row=_row(self, workload, params))
        self._applied = writer.applied
        return writer

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        repo = repository.open_repository(path)
        with repository.quiet():
            return _ZarrReader(repo.readonly_session(repository.BRANCH).store, params)

    def open_dataset(
        self,
        path: Path,
        params: Mapping[str, Any],
        *,
        chunks: Chunks,
        workload: Workload | None = None,
    ) -> Any:
        """``xr.open_zarr(session.store, chunks=...)`` of the branch's last commit."""
        repo = repository.open_repository(path)
        with repository.quiet():
            store = repo.readonly_session(repository.BRANCH).store
        return open_zarr_dataset(store, params, chunks=chunks, consolidated=False, closers=())

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        """The array as the zarr backend checks it, the repository's configuration as asked,
        its history one commit, no chunk file under the inline threshold, and the manifests
        the split makes."""
        array = _array(path)
        stored = verify_array(array, params, self._applied)
        config = repository.read_config(path)
        stored |= config
        asked = {k: params[k] for k in repository.CONFIG_KNOBS if params.get(k) is not None}
        check_properties(stored, asked)
        stored |= _layout_of(path, array, params)
        return stored

    @classmethod
    def loader_open(cls, target: Target) -> tuple[str, list[str]]:
        return "import icechunk\nimport zarr", [
            "repo = icechunk.Repository.open(icechunk.local_filesystem_storage(self.path))",
            'store = repo.readonly_session("main").store',
            f'self._array = zarr.open_array(store, path={target.variable!r}, mode="r")',
        ]

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The layout exports, zarr's configuration, and the repository written and opened."""
        makers = layout_makers(settings, target)
        makers["icechunk"] = lambda: {"text": icechunk_code(settings, target)}
        if is_set(settings, "request_concurrency", "write_empty_chunks"):
            makers["zarr_config"] = lambda: {"text": zarr_config_code(settings)}
        if settings.get("dask_chunks") is not None:
            makers["xarray_open"] = lambda: zarr_export(settings, target)
        return make_all(makers | launch_makers(settings, hints))


def _layout_of(path: Path, array: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """Commits, manifests and chunk files the repository holds, checked against the knobs."""
    repo = repository.open_repository(path)
    with repository.quiet():
        snapshots = list(repo.ancestry(branch=repository.BRANCH))
    messages = [s.message for s in snapshots]
    if messages[0] != TRIAL_COMMIT or len(messages) != 2:  # the trial's, then the initial one
        raise VerificationError(f"the repository's history is {messages}, not one trial commit")
    manifests = len(snapshots[0].manifests)
    split = params.get("manifest_split")
    if split is not None:
        rows = math.ceil(array.shape[0] / (array.shards or array.chunks)[0])
        want = math.ceil(rows / int(split))
        if manifests != want:
            raise VerificationError(
                f"{manifests} manifests, not {want} (manifest_split {split}, {rows} rows of chunks)"
            )
    files = [p for p in (path / "chunks").glob("*") if p.is_file()]
    threshold = params.get("inline_chunk_threshold") or 0
    small = [p.stat().st_size for p in files if p.stat().st_size < threshold]
    if small:
        raise VerificationError(
            f"a chunk of {min(small)} bytes is a file, not inlined "
            f"(inline_chunk_threshold {threshold})"
        )
    return {"manifests": manifests, "chunk_files": len(files)}
