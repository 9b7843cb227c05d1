"""Raw C-order bytes moved with ``os.pwrite``/``os.preadv``, as IOR's POSIX API does.

The baseline every format is compared against: no metadata, no chunks, no
codecs, just the array's bytes at their C-order offsets, transferred in
``transfer_size`` pieces.  Reads fetch only the bytes a selection needs, one
contiguous run at a time, which is what such an access pattern costs on a raw
file.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.base import Reader, Selection, SlabBackend, Writer
from iotune.backends.exports_base import Makers, Target, command, launch_makers, make_all
from iotune.backends.posix.exports import fio_args, posix_code
from iotune.backends.posix.knobs import PosixKnobs
from iotune.core.errors import NotApplicable, UsageError, VerificationError
from iotune.core.units import parse_size
from iotune.measuring.data import PAGE, aligned_empty
from iotune.model.spec import StorageSpec, Workload

#: posix_fadvise advice by the spec's word
ADVICE = {"sequential": "POSIX_FADV_SEQUENTIAL", "random": "POSIX_FADV_RANDOM"}


def _open(path: Path, flags: int, params: Mapping[str, Any]) -> int:
    """Open with the trial's flags (O_DIRECT, O_DSYNC); refuse in one line where unsupported."""
    if params.get("direct") == "on":
        flags |= os.O_DIRECT
    if params.get("sync") == "dsync":
        flags |= os.O_DSYNC
    try:
        return os.open(path, flags, 0o644)
    except OSError as err:
        if err.errno == errno.EINVAL and flags & os.O_DIRECT:
            raise UsageError(
                f"direct: on: the file system of {path.parent} does not support O_DIRECT"
            ) from err
        raise


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
        self._fd = _open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, params)
        self._sync = params.get("sync")
        flags = fcntl.fcntl(self._fd, fcntl.F_GETFL)  # what the kernel accepted
        self.applied = {
            "direct": "on" if flags & os.O_DIRECT else "off",
            "o_dsync": bool(flags & os.O_DSYNC),
        }
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
        if self._sync == "fdatasync":  # durable data without a metadata flush
            os.fdatasync(self._fd)
        os.close(self._fd)


class _PosixReader(Reader):
    def __init__(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> None:
        self._shape = workload.shape
        self._dtype = np.dtype(workload.dtype)
        self._transfer = int(params["transfer_size"])
        self._pool: list[np.ndarray] = []
        self._direct = params.get("direct") == "on"
        self._bounce = np.empty(0, np.uint8)
        self._fd = _open(path, os.O_RDONLY, params)
        if params.get("fadvise", "none") != "none":
            os.posix_fadvise(self._fd, 0, 0, getattr(os, ADVICE[params["fadvise"]]))
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
        direct = self._direct and run % PAGE == 0
        for i, offset in enumerate(offsets.tolist()):
            piece = view[i * run : (i + 1) * run]
            if self._direct and not (direct and offset % PAGE == 0):
                self._read_unaligned(piece, offset)
            else:
                _pread_all(self._fd, piece, offset, self._transfer)
        return out

    def _read_unaligned(self, out: memoryview, offset: int) -> None:
        """Under O_DIRECT, read the whole pages around a run and copy the run out."""
        first = offset - offset % PAGE
        span = -(-(offset + len(out) - first) // PAGE) * PAGE
        if self._bounce.size < span:  # kept: a fresh buffer per run would be timed as I/O
            self._bounce = aligned_empty((span,), "uint8")
        pages = self._bounce[:span].data
        _pread_all(self._fd, pages, first, max(PAGE, self._transfer - self._transfer % PAGE))
        out[:] = pages[offset - first : offset - first + len(out)]

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
        out = aligned_empty(shape, self._dtype)  # page-aligned for O_DIRECT
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
    knobs = PosixKnobs
    parameters = PosixKnobs.names()
    description = "raw C-order bytes via POSIX pwrite/pread (IOR-like baseline)"

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The ``os`` calls the trial made and a fio job that does the same (no layout)."""
        makers: Makers = {
            "posix_os_calls": lambda: {"text": posix_code(settings)},
            "fio": lambda: command(fio_args(settings, target)),
        }
        return make_all(makers | launch_makers(settings, hints))

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if not all(hasattr(os, f) for f in ("pwrite", "preadv")):
            return False, "os.pwrite/os.preadv are not available on this platform"
        return True, "POSIX I/O (os.pwrite/os.pread)"

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        transfer = parse_size(params.get("transfer_size", PosixKnobs.default("transfer_size")))
        if transfer < 1:
            raise UsageError(f"transfer_size must be at least 1 byte, got {transfer}")
        effective: dict[str, Any] = {"transfer_size": transfer}
        # absent knobs stay absent, so trials keep the ids they had
        effective |= {
            k: params[k] for k in PosixKnobs.names() if k in params and k not in effective
        }
        if effective.get("direct") == "on":
            plane = workload.nbytes // workload.shape[0]
            if plane % PAGE or transfer % PAGE:
                raise NotApplicable(
                    f"direct: O_DIRECT needs {PAGE}-byte multiples; a {workload.dims[0]} step is "
                    f"{plane} bytes and transfer_size {transfer}"
                )
        return effective, []

    def slab_budget(self, params: Mapping[str, Any]) -> int | None:
        """One transfer per slab: written just after it is made, from the CPU's cache.

        As IOR and fio write from one transfer-sized buffer.  A 32 MiB slab,
        checksummed just before its write, no longer fits the cache (measured:
        0.92 of fio's write at 4 MiB transfers with preallocation, 1.0 with this).
        """
        return int(params["transfer_size"])

    def syncs(self, params: Mapping[str, Any]) -> bool:
        """``sync: fdatasync`` and ``dsync`` make the data durable themselves."""
        return params.get("sync") in ("fdatasync", "dsync")

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        writer = _PosixWriter(path, workload, params)
        self._applied = writer.applied
        return writer

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        return _PosixReader(path, workload, params)

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        # Without the workload the size cannot be checked here; the reader
        # checks it on open and the trial checks the bytes with a crc.
        if not path.is_file():
            raise VerificationError(f"{path} is not a regular file")
        stat, knobs = path.stat(), PosixKnobs.of(params)
        return {
            "layout": "raw",
            "transfer_size": knobs.transfer_size,
            "preallocate": knobs.preallocate,
            "fadvise": knobs.fadvise,
            "sync": knobs.sync,
            **self._applied,
            "bytes": stat.st_size,
            "allocated_bytes": stat.st_blocks * 512,
        }
