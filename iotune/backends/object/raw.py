"""Raw objects: the workload as one object, PUT whole or in parts, read by ranged GETs.

The object-store counterpart of the posix backend, and the reference for what
the store can deliver: a full read fetches ``part_size`` ranges,
``request_concurrency`` of them in flight; other patterns fetch the byte runs
their selection covers, merged where they lie less than ``coalesce`` bytes
apart (the rule obstore's ``get_ranges`` applies), each merged range one GET.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends import exports_base
from iotune.backends.base import Reader, Selection, Writer, check_properties
from iotune.backends.exports_base import launch_makers, make_all
from iotune.backends.object import exports as object_exports
from iotune.backends.object.base import ObjectStoreBackend
from iotune.backends.object.knobs import RawObjectKnobs
from iotune.backends.posix.backend import _runs
from iotune.core.errors import VerificationError
from iotune.measuring.data import SLAB_BUDGET
from iotune.model.spec import StorageSpec, Workload
from iotune.objectstore.meter import Meter
from iotune.objectstore.retry import retrying
from iotune.objectstore.target import Target


def parts_of(size: int, part_size: int) -> int:
    """Requests a PUT of ``size`` bytes makes: one, or a multipart upload's parts."""
    return 1 if size <= part_size else math.ceil(size / part_size)


#: one GET: the byte range ``[start, end)`` and where its pieces go,
#: ``[(offset in the range, offset in the result, length)]``
Range = tuple[int, int, list[tuple[int, int, int]]]


def coalesced(starts: np.ndarray, length: int, gap: int) -> list[Range]:
    """Runs of ``length`` bytes at ``starts`` (the i-th lands at ``i * length`` in the
    result), merged where less than ``gap`` bytes apart, as obstore's ``get_ranges`` does."""
    merged: list[Range] = []
    for i in np.argsort(starts, kind="stable").tolist():
        start = int(starts[i])
        if merged and start <= merged[-1][1] + gap:
            first, end, pieces = merged[-1]
            pieces.append((start - first, i * length, length))
            merged[-1] = (first, max(end, start + length), pieces)
        else:
            merged.append((start, start + length, [(0, i * length, length)]))
    return merged


def split(first: int, length: int, part: int) -> list[Range]:
    """One contiguous span of ``length`` bytes at ``first`` as GETs of ``part`` bytes."""
    return [
        (first + o, first + min(o + part, length), [(0, o, min(part, length - o))])
        for o in range(0, length, part)
    ]


class _ObjectWriter(Writer):
    def __init__(self, target: Target, key: str, params: Mapping[str, Any]) -> None:
        import obstore as obs

        self.meter = Meter()
        self._part = int(params["part_size"])
        self._size = 0
        # obstore's own retries stay off (counted ones only): a throttled part fails
        # the upload, and the trial says so
        self._file = obs.open_writer(
            target.obstore(),
            key,
            buffer_size=self._part,
            max_concurrency=int(params["request_concurrency"]),
        )

    def write(self, start: int, data: np.ndarray) -> None:
        self._file.write(np.ascontiguousarray(data).data.cast("B"))
        self._size += data.nbytes

    def close(self) -> None:
        self._file.close()
        parts = parts_of(self._size, self._part)
        # obstore's writer: a single PUT below one part, else create, parts, complete
        self.meter.record("PUT", count=parts, sent=self._size)
        if parts > 1:
            self.meter.record("POST", count=2)

    def traffic(self) -> dict[str, Any]:
        return self.meter.summary()


class _ObjectReader(Reader):
    def __init__(self, target: Target, key: str, workload: Workload, params: Mapping[str, Any]):
        self.meter = Meter()
        self._store = target.obstore()  # a new client: no cache, no open connection
        self._key = key
        self._shape, self._dtype = workload.shape, np.dtype(workload.dtype)
        self._part = int(params["part_size"])
        self._gap = int(params["coalesce"])
        self._inflight = int(params["request_concurrency"])
        self._loop = asyncio.new_event_loop()

    def read(self, selection: Selection) -> np.ndarray:
        offsets, run, shape = _runs(selection, self._shape, self._dtype.itemsize)
        out = np.empty(shape, self._dtype)
        view = out.reshape(-1).view(np.uint8)
        if len(offsets) == 1:  # one contiguous span: part_size ranges
            ranges = split(int(offsets[0]), run, self._part)
        else:
            ranges = coalesced(offsets, run, self._gap)
        self._loop.run_until_complete(self._fetch_all(ranges, view))
        return out

    async def _fetch_all(self, ranges: list[Range], view: np.ndarray) -> None:
        limit = asyncio.Semaphore(self._inflight)
        await asyncio.gather(*(self._fetch(r, view, limit) for r in ranges))

    async def _fetch(self, rng: Range, view: np.ndarray, limit: asyncio.Semaphore) -> None:
        import obstore as obs

        start, end, pieces = rng

        async def get() -> Any:
            sent = time.perf_counter()
            resp = await obs.get_async(self._store, self._key, options={"range": (start, end)})
            first = time.perf_counter() - sent
            data = await resp.bytes_async()
            self.meter.record("GET", received=len(data), ttfb=first)
            return data

        async with limit:
            data = np.frombuffer(await retrying(get, self.meter), np.uint8)
        if len(data) != end - start:
            raise VerificationError(f"GET of bytes {start}-{end} returned {len(data)} bytes")
        for offset, at, length in pieces:
            view[at : at + length] = data[offset : offset + length]

    def close(self) -> None:
        self._loop.close()

    def traffic(self) -> dict[str, Any]:
        return self.meter.summary()


class RawObjectBackend(ObjectStoreBackend):
    """The workload as one raw object (C order), on the sweep's object store."""

    name = "object"
    suffix = ".bin"
    knobs = RawObjectKnobs
    parameters = RawObjectKnobs.names()
    description = "raw objects: PUT whole or multipart, ranged GETs (obstore)"

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: exports_base.Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """obstore's PUT in parts, ranged GETs and ``get_ranges`` as measured (no layout)."""
        found = object_exports.object_makers(
            settings, target, storage, object_exports.RAW, defaults=RawObjectKnobs.defaults()
        )
        return make_all(found | launch_makers(settings, hints))

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        return {k: params.get(k, d) for k, d in RawObjectKnobs.defaults().items()}, []

    def read_budget(self, params: Mapping[str, Any]) -> int:
        # a selection holds every part in flight: with smaller ones a full read would
        # wait for each selection's last GET, never keeping request_concurrency busy
        return max(SLAB_BUDGET, int(params["part_size"]) * int(params["request_concurrency"]))

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        return _ObjectWriter(self.target, self.key(path), params)

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        return _ObjectReader(self.target, self.key(path), workload, params)

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        found = self.objects(path)
        key = self.key(path)
        if key not in found:
            raise VerificationError(f"object {self.target.url(key)} is missing after the write")
        stored = {"object_bytes": found[key], "objects": len(found)}
        check_properties(stored, {"objects": 1})
        return stored
