"""Codecs in memory only: compress and decompress chunks, no file at all.

For screening codec choices fast and in parallel: the figures are codec
throughput and ratio on this CPU, without any storage in the way.  Chunks are
kept compressed in a per-process store keyed by the trial's path.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.base import Reader, Selection, SlabBackend, Writer
from iotune.backends.exports_base import Target, launch_makers, make_all
from iotune.backends.layout_exports import layout_makers
from iotune.backends.memory.knobs import MemoryKnobs
from iotune.core.errors import VerificationError
from iotune.core.units import chunk_label, parse_chunk_label
from iotune.model import codecs
from iotune.model.spec import StorageSpec, Workload

_STORE: dict[str, dict[tuple[int, ...], bytes]] = {}


def _chunks(params: Mapping[str, Any], workload: Workload) -> tuple[int, ...]:
    layout = parse_chunk_label(params["chunks"])
    return layout if isinstance(layout, tuple) else workload.shape


def _pipeline(params: Mapping[str, Any], workload: Workload) -> list[Any]:
    return codecs.numcodecs_pipeline(codecs.Codec.from_params(params), itemsize=workload.itemsize)


class _MemWriter(Writer):
    def __init__(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> None:
        self._store = _STORE.setdefault(str(path), {})
        self._store.clear()
        self._chunks = _chunks(params, workload)
        self._pipeline = _pipeline(params, workload)
        self._pending: list[np.ndarray] = []
        self._row = 0  # index of the next chunk row along the first dimension

    def write(self, start: int, data: np.ndarray) -> None:
        # slabs need not match chunk rows: buffer until a whole row is there
        self._pending.append(data)
        if sum(p.shape[0] for p in self._pending) >= self._chunks[0]:
            self._flush(final=False)

    def _flush(self, *, final: bool) -> None:
        if not self._pending:
            return
        data = np.concatenate(self._pending)
        c0 = self._chunks[0]
        whole = data.shape[0] if final else (data.shape[0] // c0) * c0
        for r in range(0, whole, c0):
            self._encode_row(data[r : r + c0])
        self._pending = [data[whole:]] if whole < data.shape[0] else []

    def _encode_row(self, rows: np.ndarray) -> None:
        grid = [range(0, n, c) for n, c in zip(rows.shape[1:], self._chunks[1:], strict=True)]
        for origin in itertools.product(*grid):
            inner = zip(origin, self._chunks[1:], strict=True)
            box = (slice(None), *(slice(o, o + c) for o, c in inner))
            buf: Any = np.ascontiguousarray(rows[box])
            for step in self._pipeline:
                buf = step.encode(buf)
            key = (self._row, *(o // c for o, c in zip(origin, self._chunks[1:], strict=True)))
            self._store[key] = bytes(buf)
        self._row += 1

    def close(self) -> None:
        self._flush(final=True)


class _MemReader(Reader):
    def __init__(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> None:
        self._store = _STORE[str(path)]
        self._chunks = _chunks(params, workload)
        self._pipeline = _pipeline(params, workload)
        self._workload = workload

    def _chunk(self, key: tuple[int, ...]) -> np.ndarray:
        buf: Any = self._store[key]
        for step in reversed(self._pipeline):
            buf = step.decode(buf)
        shape = [
            min(c, n - k * c)
            for k, c, n in zip(key, self._chunks, self._workload.shape, strict=True)
        ]
        return np.frombuffer(buf, dtype=self._workload.dtype)[: int(np.prod(shape))].reshape(shape)

    def read(self, selection: Selection) -> np.ndarray:
        w = self._workload
        full = list(selection) + [slice(None)] * (len(w.shape) - len(selection))
        spans, squeeze = [], []
        for sel, n in zip(full, w.shape, strict=True):
            if isinstance(sel, slice):
                start, stop, _ = sel.indices(n)
                spans.append((start, stop))
                squeeze.append(False)
            else:
                spans.append((int(sel), int(sel) + 1))
                squeeze.append(True)
        out = np.empty([b - a for a, b in spans], dtype=w.dtype)
        grid = [
            range(a // c, (b - 1) // c + 1) for (a, b), c in zip(spans, self._chunks, strict=True)
        ]
        for key in itertools.product(*grid):
            chunk = self._chunk(key)
            src, dst = [], []
            for k, c, (a, b) in zip(key, self._chunks, spans, strict=True):
                lo, hi = max(a, k * c), min(b, (k + 1) * c)
                src.append(slice(lo - k * c, hi - k * c))
                dst.append(slice(lo - a, hi - a))
            out[tuple(dst)] = chunk[tuple(src)]
        return out.reshape([s for s, q in zip(out.shape, squeeze, strict=True) if not q])

    def close(self) -> None:
        """Chunks stay until the trial removes them."""


class MemoryBackend(SlabBackend):
    """Compression in memory: codec speed and ratio without storage."""

    name = "memory"
    library = "numcodecs"
    suffix = ".mem"
    knobs = MemoryKnobs
    parameters = MemoryKnobs.names()
    description = "codecs in memory via numcodecs (no file; CPU-bound screening)"
    io_bound = False
    in_memory = True

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The layout exports: the codec and chunks measured in memory, for a file."""
        return make_all(layout_makers(settings, target) | launch_makers(settings, hints))

    @classmethod
    def import_library(cls) -> None:
        """One blosc thread per trial: trials, not codec threads, are what executors spread
        over cores, and a screening figure must not depend on how busy the host is."""
        import numcodecs.blosc

        numcodecs.blosc.set_nthreads(1)

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        chunks = chunk_label(params.get("chunks", MemoryKnobs.default("chunks")))
        if chunks in ("auto", "contiguous"):
            chunks = "contiguous"
        codec, notes = codecs.resolve_params(params)
        effective = {"chunks": chunks, "codec": codec.name, "level": codec.level,
                     "shuffle": codec.shuffle}  # fmt: skip
        return effective, notes

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        return _MemWriter(path, workload, params)

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        return _MemReader(path, workload, params)

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        if str(path) not in _STORE or not _STORE[str(path)]:
            raise VerificationError("no chunks were stored")
        return {"layout": params["chunks"], "chunks_stored": len(_STORE[str(path)])}

    def paths(self, path: Path) -> list[Path]:
        return []

    def stored_bytes(self, path: Path) -> int:
        return sum(len(b) for b in _STORE.get(str(path), {}).values())

    def remove(self, path: Path) -> None:
        _STORE.pop(str(path), None)
