"""What the object-storage backends share: where their objects are, and no page cache.

An :class:`ObjectStoreBackend` is a :class:`~iotune.backends.base.SlabBackend` whose
"path" names objects rather than files: the runner hands it a path inside the
trial's local scratch directory, and :meth:`ObjectStoreBackend.key` turns it into
the key below the run's area on the store (``PREFIX/iotune-scratch-XXXX/
trial-ID/r0.zarr``).  Nothing lands in a page cache, so the runner evicts
nothing; a cold read is one by a new client with no cache of its own, which
the runner checks by the bytes the read fetched (:func:`fetched_fraction`).
A PUT is durable when it returns, so there is no fsync either.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from iotune.backends.base import SlabBackend
from iotune.model.spec import StorageSpec
from iotune.objectstore.retry import MAX_RETRIES

#: the schemes whose fsspec requests iotune meters (s3fs's aiobotocore events)
METERED_FSSPEC = ("s3", "file")


class ObjectStoreBackend(SlabBackend):
    """A format stored as objects on the sweep's ``storage`` target."""

    library = "obstore"
    extra = "objectstore"
    #: a sweep with ``storage`` takes only these backends, and these only with it
    object_storage: ClassVar[bool] = True

    @classmethod
    def unmetered(cls, params: Mapping[str, Any], scheme: str) -> str | None:
        """Why ``params`` cannot be measured on a ``scheme://`` store, or None.

        fsspec's requests are metered through aiobotocore's events, so on s3:// only
        (and file://); gcsfs and adlfs give no such hook here, and a read that
        fetched no counted byte would fail the cold-read check.
        """
        if cls.fsspec_client(params) and scheme not in METERED_FSSPEC:
            return (
                f"{cls.name} reads through fsspec here, whose requests iotune meters on "
                f"{' and '.join(s + '://' for s in METERED_FSSPEC)} only, not {scheme}://; "
                "measure zarr-object or object with client obstore"
            )
        return None

    @classmethod
    def fsspec_client(cls, params: Mapping[str, Any]) -> bool:
        """Whether ``params`` read and write through fsspec."""
        return params.get("client") == "fsspec"

    def bind(self, storage: StorageSpec, scratch: Path) -> None:
        """Place this backend's objects in the run's area (``scratch``'s name) on ``storage``."""
        from iotune.objectstore.target import Target

        self.target = Target(storage, area=Path(scratch).name)
        self._root = Path(scratch)
        self._listed: dict[Path, dict[str, int]] = {}

    def key(self, path: Path) -> str:
        """The object key (or prefix) for the runner's ``path``."""
        return self.target.key(*Path(path).relative_to(self._root).parts)

    def syncs(self, params: Mapping[str, Any]) -> bool:
        return True  # a completed PUT is durable: there is nothing to fsync

    def paths(self, path: Path) -> list[Path]:
        return []  # no local files: nothing to evict from the page cache

    def objects(self, path: Path) -> dict[str, int]:
        """Every object under ``path``'s key, with its size (one untimed, unmetered listing).

        Listed once after the write (by ``verify``) and kept until :meth:`remove`:
        the sizes, the cold-read check of each full read and the removal all need
        the same list, and a repeat's objects do not change once written.
        """
        if path not in self._listed:
            self._listed[path] = self._list(path)
        return self._listed[path]

    def _list(self, path: Path) -> dict[str, int]:
        import obstore as obs

        key = self.key(path)
        store = self.target.obstore(retries=MAX_RETRIES)  # untimed: obstore may retry
        found: dict[str, int] = {}
        # listed from the parent: a prefix names a "directory", never the object itself
        parent = key.rsplit("/", 1)[0] if "/" in key else None
        for batch in obs.list(store, prefix=parent):
            for meta in batch:
                if meta["path"] == key or meta["path"].startswith(key + "/"):
                    found[meta["path"]] = int(meta["size"])
        return found

    def stored_bytes(self, path: Path) -> int:
        return sum(self.objects(path).values())

    def remove(self, path: Path) -> None:
        import obstore as obs

        keys = list(self.objects(path))
        self._listed.pop(path, None)
        if keys:
            obs.delete(self.target.obstore(retries=MAX_RETRIES), keys)


def fetched_fraction(fetched: int, stored: int) -> float:
    """Share of a full read's stored bytes that did not cross the network (0: cold).

    A full read by a client with no cache fetches every stored byte at least
    once; what it did not fetch came from a cache, the object-store counterpart
    of the page-cache residency :func:`iotune.measuring.measure.prepare_cache` checks.
    """
    if stored <= 0:
        return 0.0
    return max(0.0, 1.0 - fetched / stored)
