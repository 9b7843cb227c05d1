"""An Icechunk repository on local storage: its configuration from the knobs and back.

Every knob of :class:`~iotune.backends.icechunk.knobs.RepositoryKnobs` is a field of
Icechunk's ``RepositoryConfig``, which ``Repository.create`` keeps in the repository
(``config.yaml``), so a reader that opens the repository applies it and
:func:`read_config` reads it back from there.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

#: the branch a trial or a conversion commits to
BRANCH = "main"
#: the knobs the repository's configuration holds
CONFIG_KNOBS = (
    "inline_chunk_threshold",
    "manifest_split",
    "manifest_preload",
    "max_concurrent_requests",
    "chunk_cache",
)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Icechunk's log at errors only; zarr's warning on numcodecs codecs silenced.

    Icechunk warns that local storage is not safe for concurrent commits: one process
    commits here.
    """
    from zarr.errors import ZarrUserWarning

    _quiet_icechunk()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZarrUserWarning)
        yield


@functools.cache
def _quiet_icechunk() -> None:
    import icechunk

    icechunk.set_logs_filter("error")


def repository_config(settings: Mapping[str, Any]) -> Any:
    """``icechunk.RepositoryConfig`` with the knobs ``settings`` sets (None: Icechunk's)."""
    import icechunk as ic

    config = ic.RepositoryConfig.default()
    if settings.get("inline_chunk_threshold") is not None:
        config.inline_chunk_threshold_bytes = int(settings["inline_chunk_threshold"])
    if settings.get("max_concurrent_requests") is not None:
        config.max_concurrent_requests = int(settings["max_concurrent_requests"])
    if settings.get("chunk_cache") is not None:
        config.caching = ic.CachingConfig(num_bytes_chunks=int(settings["chunk_cache"]))
    split, preload = settings.get("manifest_split"), settings.get("manifest_preload")
    if split is not None or preload is not None:
        config.manifest = ic.ManifestConfig(
            preload=None if preload is None else _preload(str(preload)),
            splitting=None if split is None else _splitting(int(split)),
        )
    return config


def _preload(switch: str) -> Any:
    import icechunk as ic

    on = switch == "on"
    condition = ic.ManifestPreloadCondition.true() if on else ic.ManifestPreloadCondition.false()
    return ic.ManifestPreloadConfig(preload_if=condition)


def _splitting(size: int) -> Any:
    import icechunk as ic

    axis = ic.ManifestSplitDimCondition.Axis(0)
    every = ic.ManifestSplitCondition.AnyArray()
    return ic.ManifestSplittingConfig.from_dict({every: {axis: size}})


def read_config(path: Path) -> dict[str, Any]:
    """The knobs the repository at ``path`` keeps in its configuration, in iotune's names."""
    import icechunk as ic

    with quiet():
        config = ic.Repository.fetch_config(ic.local_filesystem_storage(str(path)))
    found: dict[str, Any] = dict.fromkeys(CONFIG_KNOBS)
    if config is None:
        return found
    found["inline_chunk_threshold"] = config.inline_chunk_threshold_bytes
    found["max_concurrent_requests"] = config.max_concurrent_requests
    if config.caching is not None:
        found["chunk_cache"] = config.caching.num_bytes_chunks
    manifest = config.manifest
    if manifest is not None and manifest.preload is not None:
        condition = manifest.preload.preload_if
        found["manifest_preload"] = (
            "on" if condition == ic.ManifestPreloadCondition.true() else "off"
        )
    if manifest is not None and manifest.splitting is not None:
        ((_, ((_, size),)),) = manifest.splitting.split_sizes
        found["manifest_split"] = int(size)
    return found


def create(path: Path, settings: Mapping[str, Any]) -> Any:
    """A new repository at ``path`` with the configuration of ``settings``."""
    import icechunk as ic

    with quiet():  # the storage's constructor logs the warning on concurrent commits
        storage = ic.local_filesystem_storage(str(path))
        return ic.Repository.create(storage, config=repository_config(settings))


def open_repository(path: Path) -> Any:
    """The repository at ``path``, with the configuration it keeps."""
    import icechunk as ic

    with quiet():
        return ic.Repository.open(ic.local_filesystem_storage(str(path)))


def is_repository(path: Path) -> bool:
    """Whether ``path`` is a directory holding an Icechunk repository (its ``refs`` and
    ``config.yaml`` or ``snapshots``), judged from its files without opening it."""
    return path.is_dir() and (path / "refs").is_dir() and (path / "snapshots").is_dir()


def history(path: Path) -> list[str]:
    """The commit messages of the branch, newest first."""
    repo = open_repository(path)
    with quiet():
        return [snapshot.message for snapshot in repo.ancestry(branch=BRANCH)]


def fsync_new(path: Path, done: set[Path]) -> set[Path]:
    """fsync the repository's files not in ``done`` and its branch refs, then its folders;
    return every file now durable.

    Icechunk's commit on local storage calls no fsync (its files are written and the ref
    moved by rename); a conversion's journal must not name a region before it is durable.
    """
    import os

    from iotune.measuring.measure import fsync_paths

    files = {p for p in path.rglob("*") if p.is_file()}
    refs = {p for p in files if p.relative_to(path).parts[0] == "refs"}  # moved, not new
    fsync_paths(sorted((files - done) | refs))
    for folder in [path, *(p for p in path.rglob("*") if p.is_dir())]:
        fd = os.open(folder, os.O_RDONLY)  # the renames into it
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return files
