"""Timers, fsync, page-cache eviction and residency checks.

Residency is read with ``mincore(2)`` on a read-only mapping of each file, so
"cold" is verified rather than hoped for.  Linux only, like the systems iotune
is meant for.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import mmap
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_PROT_READ = 0x1
_MAP_SHARED = 0x01
_MAP_FAILED = ctypes.c_void_p(-1).value


@dataclass
class Stopwatch:
    """Accumulates wall and CPU seconds over the spans it is asked to time.

    Only the library calls are timed; generating data or checksums between
    them is not, so iotune's own work stays out of the figures.
    """

    wall: float = 0.0
    cpu: float = 0.0

    def __enter__(self) -> Stopwatch:
        self._t0 = time.perf_counter()
        self._c0 = time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._t0
        self.cpu += time.process_time() - self._c0


def fsync_paths(paths: Iterable[Path]) -> None:
    """``fsync`` every file, so their data is on the device (IOR's ``-e``)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def evict(paths: Iterable[Path]) -> None:
    """Drop the files' pages from the page cache.

    Dirty pages cannot be dropped, so each file is synced first (untimed).
    """
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def prepare_cache(paths: list[Path], *, mode: str, max_residency: float) -> tuple[str, float]:
    """Make the files cold (evicted, residency verified) or measure them warm.

    The one eviction every reader uses: the trial runner, concurrent
    processes and the MPI rank programs (one rank per node).

    Returns
    -------
    tuple
        The cache state (``cold``, ``warm``, or ``not-cold`` when three
        evictions left more than ``max_residency`` resident) and the
        resident fraction measured with ``mincore`` when the read may begin.
    """
    if mode == "warm":
        return "warm", resident_fraction(paths)
    fraction = 1.0
    for _attempt in range(3):
        evict(paths)
        fraction = resident_fraction(paths)
        if fraction <= max_residency:
            return "cold", fraction
    return "not-cold", fraction


@functools.cache
def _libc() -> ctypes.CDLL:
    # once per process: find_library runs ldconfig (~9 ms), and a Zarr store has a
    # file per chunk, so a cold read of 512 chunks paid seconds before this cache
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
    return libc


def resident_pages(path: Path) -> tuple[int, int]:
    """Return ``(resident, total)`` page counts of one file, from ``mincore``."""
    size = path.stat().st_size
    if size == 0:
        return 0, 0
    libc = _libc()
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, _PROT_READ, _MAP_SHARED, fd, 0)
        if addr in (None, _MAP_FAILED):
            err = ctypes.get_errno()
            raise OSError(err, f"mmap failed: {os.strerror(err)}", str(path))
        try:
            vec = (ctypes.c_ubyte * pages)()
            if libc.mincore(addr, size, vec) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"mincore failed: {os.strerror(err)}", str(path))
            resident = int((np.frombuffer(bytes(vec), dtype=np.uint8) & 1).sum())
            return resident, pages
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)


def resident_fraction(paths: Iterable[Path]) -> float:
    """Fraction of the files' pages that sit in the page cache (0 for no pages)."""
    resident = total = 0
    for path in paths:
        r, t = resident_pages(path)
        resident += r
        total += t
    return resident / total if total else 0.0


def open_files_under(directory: Path) -> list[str]:
    """Files under ``directory`` this process still holds open (Linux ``/proc``).

    A library whose close failed (HDF5 on ENOSPC, say) may keep its file
    open; the space of that file is not freed until the process exits.
    """
    prefix = str(directory.resolve()) + os.sep
    held = []
    try:
        fds = list(Path("/proc/self/fd").iterdir())
    except OSError:
        return []
    for fd in fds:
        try:
            target = str(fd.readlink())
        except OSError:
            continue  # closed meanwhile (the listing's own fd)
        if target.startswith(prefix):
            held.append(target.removesuffix(" (deleted)"))
    return held
