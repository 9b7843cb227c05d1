"""zarr's ``ObjectStore`` (obstore) with every request timed, counted and retried.

obstore has no per-request hook, so each store call is made here as zarr
makes it: the time to the response headers is the GET's first byte, a
throttled request is retried (:mod:`iotune.objectstore.retry`) and counted.
Imported only by trials that use it: it imports zarr.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator
from typing import Any

from zarr.storage import ObjectStore

from iotune.objectstore.meter import Meter
from iotune.objectstore.retry import retrying


class MeteredObjectStore(ObjectStore):
    """zarr's ``ObjectStore`` with each request timed, retried when throttled, and counted."""

    def __init__(self, store: Any, *, meter: Meter, read_only: bool = False) -> None:
        super().__init__(store, read_only=read_only)
        self.meter = meter

    def with_read_only(self, read_only: bool = False) -> MeteredObjectStore:
        return type(self)(self.store, meter=self.meter, read_only=read_only)

    async def get(self, key: str, prototype: Any, byte_range: Any = None) -> Any:
        import obstore as obs
        from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest

        options: Any = {}
        if isinstance(byte_range, RangeByteRequest):
            options["range"] = (byte_range.start, byte_range.end)
        elif isinstance(byte_range, OffsetByteRequest):
            options["range"] = {"offset": byte_range.offset}
        elif isinstance(byte_range, SuffixByteRequest):
            options["range"] = {"suffix": byte_range.suffix}

        async def fetch() -> bytes:
            sent = time.perf_counter()
            resp = await obs.get_async(self.store, key, options=options or None)
            first = time.perf_counter() - sent
            data = await resp.bytes_async()
            self.meter.record("GET", received=len(data), ttfb=first)
            return bytes(data) if not isinstance(data, bytes) else data

        try:
            return prototype.buffer.from_bytes(await retrying(fetch, self.meter))
        except FileNotFoundError:
            self.meter.record("GET")
            return None

    async def get_partial_values(self, prototype: Any, key_ranges: Any) -> list[Any]:
        return [await self.get(key, prototype, byte_range) for key, byte_range in key_ranges]

    async def exists(self, key: str) -> bool:
        import obstore as obs

        self.meter.record("HEAD")
        try:
            await retrying(lambda: obs.head_async(self.store, key), self.meter)
        except FileNotFoundError:
            return False
        return True

    async def set(self, key: str, value: Any) -> None:
        import obstore as obs

        self._check_writable()
        data = value.as_numpy_array().tobytes()
        await retrying(lambda: obs.put_async(self.store, key, data), self.meter)
        self.meter.record("PUT", sent=len(data))

    async def set_if_not_exists(self, key: str, value: Any) -> None:
        import obstore as obs

        self._check_writable()
        data = value.as_numpy_array().tobytes()
        with contextlib.suppress(obs.exceptions.AlreadyExistsError):
            await retrying(lambda: obs.put_async(self.store, key, data, mode="create"), self.meter)
        self.meter.record("PUT", sent=len(data))

    async def delete(self, key: str) -> None:
        import obstore as obs

        self._check_writable()
        # zarr's adapter treats a missing key as deleted on every store; so does this one
        with contextlib.suppress(FileNotFoundError):
            await retrying(lambda: obs.delete_async(self.store, key), self.meter)
        self.meter.record("DELETE")

    async def delete_dir(self, prefix: str) -> None:
        self._check_writable()
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        for meta in await self._listed(prefix):
            await self.delete(meta["path"])

    async def _listed(self, prefix: str | None) -> list[Any]:
        """Every object below ``prefix``: one LIST per 1000 keys, as S3 pages them."""
        import obstore as obs

        metas = await retrying(
            lambda: obs.list(self.store, prefix=prefix).collect_async(), self.meter
        )
        self.meter.record("LIST", count=1 + len(metas) // 1000)
        return list(metas)

    async def _list(self, prefix: str | None = None) -> AsyncGenerator[Any, None]:
        for meta in await self._listed(prefix):
            yield meta

    async def _list_dir(self, prefix: str) -> AsyncGenerator[str, None]:
        import obstore as obs

        found = await retrying(
            lambda: obs.list_with_delimiter_async(self.store, prefix=prefix), self.meter
        )
        self.meter.record("LIST")
        base = prefix.rstrip("/")
        paths = [*found["common_prefixes"], *(m["path"] for m in found["objects"])]
        for path in paths:  # relative to the prefix, as zarr's own adapter yields them
            yield path.removeprefix(base).lstrip("/") if base else path

    def list_dir(self, prefix: str) -> AsyncGenerator[str, None]:
        return self._list_dir(prefix)

    async def getsize(self, key: str) -> int:
        import obstore as obs

        meta = await retrying(lambda: obs.head_async(self.store, key), self.meter)
        self.meter.record("HEAD")
        return int(meta["size"])
