"""Raw C-order bytes moved with ``os.pwrite``/``os.preadv``, as IOR's POSIX API does.

The baseline every format is compared against: no metadata, no chunks, no
codecs, just the array's bytes at their C-order offsets, transferred in
``transfer_size`` pieces.  Reads fetch only the bytes a selection needs, one
contiguous run at a time, which is what such an access pattern costs on a raw
file.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.base import Reader, Selection, SlabBackend, Writer
from iotune.errors import UsageError, VerificationError
from iotune.model.spec import Workload
from iotune.units import parse_size

DEFAULT_TRANSFER = 2**20


def _pwrite_all(fd: int, data: memoryview, offset: int, transfer: int) -> None:
    """Write ``data`` at ``offset`` in ``transfer``-byte calls, retrying short writes."""
    done = 0
    while done < len(data):
        piece = data[done : done + transfer]
        n = os.pwrite(fd, piece, offset + done)
        if n == 0:
            raise OSError(errno.EIO, f"pwrite wrote nothing at offset {offset + done}")
        done += n


def _pread_all(fd: int, out: memoryview, offset: int, transfer: int) -> None:
    """Fill ``out`` from ``offset`` in ``transfer``-byte calls, retrying short reads."""
    done = 0
    while done < len(out):
        n = os.preadv(fd, [out[done : done + transfer]], offset + done)
        if n == 0:
            raise OSError(errno.EIO, f"unexpected end of file at offset {offset + done}")
        done += n


class _PosixWriter(Writer):
    def __init__(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> None:
        self._dtype = np.dtype(workload.dtype)
        self._plane = workload.shape[1:]
        self._plane_bytes = workload.nbytes // workload.shape[0]
        self._transfer = int(params["transfer_size"])
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        if params.get("preallocate") == "on":  # as fio does by default; timed with the writes
            try:
                os.posix_fallocate(self._fd, 0, workload.nbytes)
            except OSError as err:
                os.close(self._fd)
                raise UsageError(
                    f"preallocate: on: {path.parent} cannot preallocate: {err}"
                ) from err

    def write(self, start: int, data: np.ndarray) -> None:
        if data.dtype != self._dtype or data.shape[1:] != self._plane:
            raise ValueError(
                f"slab {data.dtype}{list(data.shape)} does not fit the workload "
                f"{self._dtype}[n, {', '.join(map(str, self._plane))}]"
            )
        view = np.ascontiguousarray(data).data.cast("B")
        _pwrite_all(self._fd, view, start * self._plane_bytes, self._transfer)

    def close(self) -> None:
        os.close(self._fd)


class _PosixReader(Reader):
    def __init__(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> None:
        self._shape = workload.shape
        self._dtype = np.dtype(workload.dtype)
        self._transfer = int(params["transfer_size"])
        self._pool: list[np.ndarray] = []
        self._fd = os.open(path, os.O_RDONLY)
        size = os.fstat(self._fd).st_size
        if size != workload.nbytes:
            os.close(self._fd)
            raise VerificationError(
                f"{path.name} holds {size} bytes, the workload needs {workload.nbytes}"
            )

    def read(self, selection: Selection) -> np.ndarray:
        offsets, run, out_shape = _runs(selection, self._shape, self._dtype.itemsize)
        out = self._output(out_shape)
        view = out.reshape(-1).view(np.uint8).data
        for i, offset in enumerate(offsets.tolist()):
            _pread_all(self._fd, view[i * run : (i + 1) * run], offset, self._transfer)
        return out

    def _output(self, shape: tuple[int, ...]) -> np.ndarray:
        """An array for the result, reusing one of the last two that nobody holds any more.

        A fresh array of tens of MiB costs a page fault per 4 KiB page on first touch,
        which would be timed as I/O; IOR and fio reuse their buffers.  Two are kept
        because the caller still holds the previous result while asking for the next.
        """
        for i in range(len(self._pool)):
            # two references: the pool's and getrefcount's argument
            if self._pool[i].shape == shape and sys.getrefcount(self._pool[i]) == 2:
                self._pool.append(self._pool.pop(i))
                return self._pool[-1]
        out = np.empty(shape, self._dtype)
        self._pool = [*self._pool[-1:], out]
        return out

    def close(self) -> None:
        self._pool = []
        os.close(self._fd)


def _indices(sel: slice | int, size: int) -> tuple[np.ndarray, bool, bool]:
    """Indices one selection entry picks, whether it keeps its axis, and whether step is 1."""
    if isinstance(sel, slice):
        picked = range(*sel.indices(size))
        return np.arange(picked.start, picked.stop, picked.step), True, picked.step == 1
    index = int(sel)
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for an axis of size {size}")
    return np.array([index % size]), False, True


def _runs(
    selection: Selection, shape: tuple[int, ...], itemsize: int
) -> tuple[np.ndarray, int, tuple[int, ...]]:
    """Byte offsets of the contiguous runs a selection covers, the run length, the result shape.

    Trailing axes merge into one run while the axes after them are selected
    whole; the axes before the merge point enumerate the runs in C order, which
    is also the order of their bytes in the result.
    """
    if len(selection) > len(shape):
        raise IndexError(f"selection {selection} has more entries than the {len(shape)} axes")
    full = (*selection, *(slice(None),) * (len(shape) - len(selection)))
    picked = [_indices(s, n) for s, n in zip(full, shape, strict=True)]
    strides = np.cumprod((*shape[1:], 1)[::-1])[::-1] * itemsize
    run, split = itemsize, len(shape)
    while split > 0:
        idx, _, unit = picked[split - 1]
        if not unit:
            break
        split -= 1
        run *= len(idx)
        if len(idx) != shape[split]:
            break
    offsets = np.zeros(1, dtype=np.int64)
    for (idx, _, _), stride in zip(picked[:split], strides[:split], strict=True):
        offsets = (offsets[:, None] + idx[None, :] * int(stride)).reshape(-1)
    if split < len(shape):
        offsets = offsets + int(picked[split][0][:1].sum()) * int(strides[split])
    out_shape = tuple(len(idx) for idx, keep, _ in picked if keep)
    return offsets, run, out_shape


class PosixBackend(SlabBackend):
    """Raw binary files written with ``os.pwrite`` and read with ``os.preadv``.

    ``transfer_size`` is the bytes moved per system call (IOR's ``-t``);
    ``preallocate: on`` reserves the file's blocks with ``posix_fallocate`` before
    the first write (fio's default). Chunks and codecs do not exist for a raw file.
    """

    name = "posix"
    library = "os"
    suffix = ".bin"
    parameters = ("transfer_size", "preallocate")
    description = "raw C-order bytes via POSIX pwrite/pread (IOR-like baseline)"

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if not all(hasattr(os, f) for f in ("pwrite", "preadv")):
            return False, "os.pwrite/os.preadv are not available on this platform"
        return True, "POSIX I/O (os.pwrite/os.pread)"

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        transfer = parse_size(params.get("transfer_size", DEFAULT_TRANSFER))
        if transfer < 1:
            raise UsageError(f"transfer_size must be at least 1 byte, got {transfer}")
        effective: dict[str, Any] = {"transfer_size": transfer}
        if "preallocate" in params:  # absent: off, and the trial keeps the id it had
            effective["preallocate"] = params["preallocate"] or "off"
        return effective, []

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        return _PosixWriter(path, workload, params)

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        return _PosixReader(path, workload, params)

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        # Without the workload the size cannot be checked here; the reader
        # checks it on open and the trial checks the bytes with a crc.
        if not path.is_file():
            raise VerificationError(f"{path} is not a regular file")
        stat = path.stat()
        return {
            "layout": "raw",
            "transfer_size": params["transfer_size"],
            "preallocate": params.get("preallocate", "off"),
            "bytes": stat.st_size,
            "allocated_bytes": stat.st_blocks * 512,
        }
