"""The device limit: sequential write and cold-read bandwidth of the scratch file system.

``iotune calibrate`` writes one large file in big transfers (``O_DIRECT`` where the
file system allows it, else buffered and fsynced, and says which), reads it back
cold (pages evicted with ``posix_fadvise(DONTNEED)``, residency verified with
``mincore``), and caches the result per file system in
``$XDG_CACHE_HOME/iotune/calibration.json``.  Sweeps then express each trial's
throughput as a fraction of that limit (:func:`iotune.results.limit.attach_limit`).
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import socket
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from iotune.core.errors import UsageError
from iotune.core.files import temporary_beside
from iotune.core.units import format_size, parse_size
from iotune.measuring import measure
from iotune.model.spec import StorageSpec
from iotune.runner.provenance import free_page_reporting, mount_of

MiB = 2**20
DEFAULT_SIZE = 2**30
DEFAULT_BLOCK = 16 * MiB
DEFAULT_REPEATS = 3
CACHE_VERSION = 1
#: shared by every node that mounts them, so one calibration serves all hosts
NETWORK_FS = frozenset(
    {"lustre", "nfs", "nfs4", "gpfs", "beegfs", "cephfs", "ceph", "pvfs2", "orangefs", "wekafs"}
)
_ALIGN = 4096


def cache_path() -> Path:
    """Where calibrations are kept: ``$XDG_CACHE_HOME/iotune/calibration.json``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "iotune" / "calibration.json"


def device_key(scratch: str | Path) -> str:
    """The cache key of the file system holding ``scratch``.

    Network file systems are keyed by type, source and mount (one entry serves
    every node); local ones also by host name, since ``/dev/sda1`` on two nodes
    are two disks.
    """
    mount = mount_of(Path(scratch))
    key = f"{mount['fs_type']}:{mount['device']}:{mount['mount']}"
    return key if mount["fs_type"] in NETWORK_FS else f"{socket.gethostname()}:{key}"


def calibrate(
    scratch: str | Path = ".",
    *,
    size: int | str = DEFAULT_SIZE,
    block: int | str = DEFAULT_BLOCK,
    repeats: int = DEFAULT_REPEATS,
    direct: bool | None = None,
    save: bool = True,
) -> dict[str, Any]:
    """Measure the scratch file system's sequential write and cold-read bandwidth.

    Parameters
    ----------
    scratch
        An existing directory on the file system to measure; a temporary file
        is written inside it and removed.
    size
        Bytes per file (``"1GiB"``); rounded up to whole ``block`` transfers.
        Make it larger than any cache in front of the device (controllers, NFS).
    block
        Bytes per ``write``/``read`` call.
    repeats
        Write-then-read passes; the limit is their median, the spread is kept.
    direct
        ``None`` uses ``O_DIRECT`` where the file system accepts it, ``False``
        never (buffered writes, timed including ``fsync``).
    save
        Store the result in :func:`cache_path` under :func:`device_key`.

    Returns
    -------
    dict
        ``write_MiBps``, ``read_MiBps`` (medians), per-repeat samples, the
        methods used, the residency before each read and the file system.

    Raises
    ------
    UsageError
        ``scratch`` is not a directory, a size is invalid or the file system
        lacks the space.
    """
    scratch, size, block = _check_args(scratch, size, block, repeats)
    mount = mount_of(scratch)
    with tempfile.TemporaryDirectory(prefix="iotune-calibrate-", dir=scratch) as tmp:
        path = Path(tmp) / "calibration.bin"
        use_direct = _direct_ok(Path(tmp), block) if direct is None else direct
        buffer = _buffer(block)
        writes, reads, residency = [], [], []
        for _ in range(repeats):
            writes.append(size / MiB / _write_pass(path, buffer, size, direct=use_direct))
            residency.append(_evict(path))
            reads.append(size / MiB / _read_pass(path, buffer, direct=use_direct))
            path.unlink()
        buffer.close()
    method = "O_DIRECT" if use_direct else "buffered"
    result = {
        "write_MiBps": statistics.median(writes),
        "read_MiBps": statistics.median(reads),
        "write_samples": writes,
        "read_samples": reads,
        "write_method": f"{method} + fsync",
        "read_method": f"{method}, page cache evicted" if not use_direct else method,
        "read_residency": residency,
        "cold": max(residency) <= 0.05,
        "size_bytes": size,
        "block_bytes": block,
        "repeats": repeats,
        "key": device_key(scratch),
        "fs_type": mount["fs_type"],
        "mount": mount["mount"],
        "device": mount["device"],
        "host": socket.gethostname(),
        "free_page_reporting": free_page_reporting(),
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    if save:
        store(result)
    return result


def _check_args(
    scratch: str | Path, size: int | str, block: int | str, repeats: int
) -> tuple[Path, int, int]:
    scratch = Path(scratch)
    if not scratch.is_dir():
        raise UsageError(f"--scratch: {str(scratch)!r} is not an existing directory")
    sizes = []
    for name, value in (("--size", size), ("--transfer-size", block)):
        try:
            sizes.append(parse_size(value))
        except ValueError as err:
            raise UsageError(f"{name}: {err}") from err
    size, block = sizes
    if block < _ALIGN or block % _ALIGN:
        raise UsageError(
            f"--transfer-size: {block} bytes; allowed: a multiple of 4KiB, at least 4KiB"
        )
    if size < MiB:
        raise UsageError(f"--size: {format_size(size)} is too small; allowed: at least 1MiB")
    if repeats < 1:
        raise UsageError(f"--repeats: {repeats}; allowed: at least 1")
    block = min(block, -(-size // _ALIGN) * _ALIGN)
    size = -(-size // block) * block
    fs = os.statvfs(scratch)
    if fs.f_bavail * fs.f_frsize < size + 64 * MiB:
        free = format_size(fs.f_bavail * fs.f_frsize, exact=False)
        raise UsageError(f"--size: {format_size(size)} does not fit in {scratch} ({free} free)")
    return scratch, size, block


def _buffer(block: int) -> mmap.mmap:
    """A page-aligned buffer (``O_DIRECT`` needs alignment) of incompressible bytes."""
    import numpy as np

    buffer = mmap.mmap(-1, block)
    np.frombuffer(buffer, dtype=np.uint8)[:] = np.random.default_rng(0).integers(
        0, 256, block, dtype=np.uint8
    )
    return buffer


def _direct_ok(directory: Path, block: int) -> bool:
    """Whether the file system accepts ``O_DIRECT`` opens and aligned writes."""
    if not hasattr(os, "O_DIRECT"):
        return False
    probe = directory / "probe.bin"
    buffer = mmap.mmap(-1, _ALIGN)
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o600)
        try:
            os.write(fd, buffer)
        finally:
            os.close(fd)
    except OSError as err:
        if err.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
            return False
        raise
    finally:
        buffer.close()
        probe.unlink(missing_ok=True)
    return True


def _write_pass(path: Path, buffer: mmap.mmap, size: int, *, direct: bool) -> float:
    """Seconds to create, write, fsync and close ``size`` bytes in ``len(buffer)`` calls."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (os.O_DIRECT if direct else 0)
    view = memoryview(buffer)
    t0 = time.perf_counter()
    fd = os.open(path, flags, 0o600)
    try:
        done = 0
        while done < size:
            done += os.write(fd, view)
        os.fsync(fd)
    finally:
        os.close(fd)
    return time.perf_counter() - t0


def _evict(path: Path) -> float:
    """Drop the file's pages; return the fraction still resident (``mincore``)."""
    fraction = 1.0
    for _attempt in range(3):
        measure.evict([path])
        fraction = measure.resident_fraction([path])
        if fraction <= 0.05:
            break
    return fraction


def _read_pass(path: Path, buffer: mmap.mmap, *, direct: bool) -> float:
    """Seconds to open, read to the end in ``len(buffer)`` calls and close."""
    t0 = time.perf_counter()
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if direct else 0))
    try:
        while os.readv(fd, [buffer]):
            pass
    finally:
        os.close(fd)
    return time.perf_counter() - t0


def _load_cache() -> dict[str, Any]:
    try:
        data = json.loads(cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"version": CACHE_VERSION, "entries": {}}
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        return {"version": CACHE_VERSION, "entries": {}}
    return data


def store(limit: dict[str, Any]) -> Path:
    """Add ``limit`` to the calibration cache under its ``key``; return the cache file."""
    data = _load_cache()
    data["entries"][limit["key"]] = limit
    path = cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_beside(path)
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
    Path(tmp).replace(path)
    return path


def store_key(storage: StorageSpec) -> str:
    """The cache key of an object store: its scheme, endpoint and bucket, never a credential.

    The prefix is left out (one bucket, one limit); a ``file://`` "store" is a
    local directory, so its key names the host like a local file system's.
    """
    if storage.scheme == "file":
        return f"store:file:{socket.gethostname()}:{storage.prefix}"
    return f"store:{storage.scheme}:{storage.endpoint or 'default'}:{storage.bucket}"


def load_limit(scratch: str | Path, *, storage: StorageSpec | None = None) -> dict[str, Any] | None:
    """The cached calibration of the file system holding ``scratch``, or ``None``.

    Parameters
    ----------
    scratch
        Any path on the file system (it need not exist any more).
    storage
        A sweep's object store: its limit (``iotune calibrate --storage``) is
        returned instead, never the file system's, which says nothing of it.

    Returns
    -------
    dict or None
        What :func:`calibrate` returned for that file system, or
        :func:`iotune.runner.calibrate_store.calibrate_store` for that store.
    """
    key = device_key(scratch) if storage is None else store_key(storage)
    return _load_cache()["entries"].get(key)


def format_limit(limit: dict[str, Any]) -> str:
    """A few lines describing a calibration, for the terminal."""
    lines = [
        f"device limit of {limit['device']} on {limit['mount']} ({limit['fs_type']}), "
        f"{format_size(limit['size_bytes'])} in {format_size(limit['block_bytes'])} "
        f"transfers, median of {limit['repeats']} repeats:"
    ]
    for what, key, method in (
        ("write", "write", limit["write_method"]),
        ("cold read", "read", limit["read_method"]),
    ):
        samples = limit[f"{key}_samples"]
        lines.append(
            f"  {what:<10} {limit[f'{key}_MiBps']:>9.0f} MiB/s  "
            f"[{min(samples):.0f} to {max(samples):.0f}]  {method}"
        )
    if not limit.get("cold", True):
        worst = max(limit["read_residency"])
        lines.append(
            f"  warning: reads were not cold ({worst:.0%} of the file stayed in the page "
            "cache; this file system cannot evict it), so the read limit is a cache figure"
        )
    if limit.get("free_page_reporting", "").startswith("on"):
        lines.append(
            "  note: this machine returns freed memory to its hypervisor (free page "
            "reporting); buffered writes that follow a pause run slower than tight loops"
        )
    return "\n".join(lines)
