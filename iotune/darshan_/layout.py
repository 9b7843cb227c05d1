"""A Darshan log's byte layout, checked in Python before the C reader sees the file.

darshan-util trusts the header: a region offset past the end of the file, a
name region that stops inside a record or a zlib stream cut short make it
assert or crash (``darshan_log_get_filtered_namehash: Assertion 'buf_len ==
0' failed``), taking the process with it.  :func:`check_layout` reads what the
library would read and checks it the way the library does not: the header
(magic number, byte order, a format version it knows, a known compression),
the region map (every region inside the file, after the header, none
overlapping), the job region, the name records (each an id and a
NUL-terminated name, the region ending on a record's end) and that every
module region iotune reads decompresses to its end.  The format is
``include/darshan-log-format.h`` and ``darshan-util/darshan-logutils.c`` of
darshan-hpc/darshan.
"""

from __future__ import annotations

import bz2
import itertools
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from iotune.core.errors import DarshanError

#: ``DARSHAN_MAGIC_NR`` in the header of every log
MAGIC = 6567223
#: the format versions darshan-util 3.5 reads (``darshan_log_get_header``)
KNOWN = ((3, 0), (3, 10), (3, 20), (3, 21), (3, 41))
NEWEST = KNOWN[-1]
#: ``enum darshan_comp_type``
COMPRESSION = {0: "zlib", 1: "bzip2", 2: "none"}
#: module ids of darshan 3.5 (``DARSHAN_MODULE_IDS``), for the regions iotune reads
MODULE_IDS = {"POSIX": 1, "MPI-IO": 2, "H5F": 3, "H5D": 4, "LUSTRE": 8, "STDIO": 9}
#: ``sizeof(struct darshan_job)``: the job region must hold more than this
_JOB = {True: 8 * 7 + 1024, False: 8 * 5 + 1024}
#: ``DARSHAN_JOB_RECORD_SIZE``: the job, the command line and the mount table fit in it
JOB_RECORD = 4096
#: a region larger than this (decompressed) is no log darshan-runtime writes
MAX_REGION = 2**31 - 1
_STEP = 2**20


@dataclass(frozen=True)
class Layout:
    """Where a log's regions are: ``regions[name] = (offset, length)`` in the file."""

    version: str
    format: tuple[int, int]
    little: bool
    compression: str
    header: int
    regions: dict[str, tuple[int, int]]


def check_layout(path: Path) -> Layout:
    """The log's layout, checked; :class:`DarshanError` naming the fault otherwise.

    Parameters
    ----------
    path
        A file that should be a Darshan log.

    Raises
    ------
    DarshanError
        One line naming the file, what is wrong and what a log holds instead.
    """
    try:
        with path.open("rb") as fh:
            size = path.stat().st_size
            layout = _header(path, fh.read(1328), size)
            _check_regions(path, layout, size)
            for name in ("job", "names", *MODULE_IDS):
                if name in layout.regions:
                    data = _inflate(path, fh, layout, name)
                    job = _JOB[layout.format >= (3, 41)]
                    if name == "job" and not job < len(data) <= JOB_RECORD:
                        raise DarshanError(
                            f"{path}: corrupt Darshan log: its job region holds {len(data)} "
                            f"bytes; a job record holds {job + 1} to {JOB_RECORD}"
                        )
                    if name == "names":
                        _check_names(path, data, layout)
    except IsADirectoryError as err:
        raise DarshanError(f"{path}: is a directory, not a Darshan log") from err
    except OSError as err:
        raise DarshanError(f"{path}: cannot read: {err.strerror}") from err
    return layout


def _header(path: Path, head: bytes, size: int) -> Layout:
    magic = struct.unpack("<q", head[8:16])[0] if len(head) >= 16 else None
    if magic not in (MAGIC, _swapped(MAGIC)):
        raise DarshanError(f"{path}: not a Darshan log (no Darshan magic number in its header)")
    little = magic == MAGIC
    version = head[:8].split(b"\0", 1)[0].decode("ascii", "replace")
    match = re.fullmatch(r"(\d+)\.(\d+)", version)
    parsed = (int(match[1]), int(match[2])) if match else None
    if parsed is not None and parsed > NEWEST:
        raise DarshanError(
            f"{path}: Darshan log format {version} is newer than this reader "
            f"(pydarshan reads up to {NEWEST[0]}.{NEWEST[1]}); upgrade the darshan package"
        )
    if parsed not in KNOWN:
        known = ", ".join(f"{a}.{b:02d}" for a, b in KNOWN)
        raise DarshanError(f"{path}: Darshan log format {version!r} is not supported ({known} are)")
    new = parsed >= (3, 41)
    # 3.41 widened the partial flag to 64 bits and the module map from 16 to 64 entries
    maps_at, count = (32, 64) if new else (24, 16)
    header = maps_at + 16 * (count + 1) + 4 * count
    if len(head) < header:
        raise DarshanError(f"{path}: truncated Darshan log ({size} bytes, header incomplete)")
    comp = head[16]
    if comp not in COMPRESSION:
        raise DarshanError(
            f"{path}: corrupt Darshan log: compression type {comp} in its header; "
            "a log has 0 (zlib), 1 (bzip2) or 2 (none)"
        )
    order = "<" if little else ">"
    maps = [struct.unpack_from(f"{order}QQ", head, maps_at + 16 * i) for i in range(count + 1)]
    names, modules = maps[0], list(maps[1:])
    if parsed < (3, 20):
        modules.insert(4, (0, 0))  # H5D came in 3.2.0, after H5F
    if parsed < (3, 41):
        modules.insert(6, (0, 0))  # PNETCDF_VAR came in 3.4.1
    regions = {"names": names} if names[1] else {}
    regions |= {m: modules[i] for m, i in MODULE_IDS.items() if modules[i][1]}
    others = {f"module {i}": m for i, m in enumerate(modules) if m[1]}
    regions |= {k: v for k, v in others.items() if v not in regions.values()}
    # as darshan_log_get_header: the job data runs from the header to the name records,
    # or to the first module region, or to the end of the file
    first = names[0] or next((off for off, _n in modules if off), 0) or size
    regions = {"job": (header, first - header), **regions}
    return Layout(version, parsed, little, COMPRESSION[comp], header, regions)


def _swapped(value: int) -> int:
    return int(struct.unpack(">q", struct.pack("<q", value))[0])


def _check_regions(path: Path, layout: Layout, size: int) -> None:
    """Every region after the header, inside the file, and none overlapping another."""
    spans = sorted((off, off + n, name) for name, (off, n) in layout.regions.items())
    for start, end, name in spans:
        if start < layout.header or end <= start:
            raise DarshanError(
                f"{path}: corrupt Darshan log: its {name} region starts at byte {start} "
                f"with length {end - start}; regions follow the {layout.header}-byte header"
            )
        if end > size:
            raise DarshanError(
                f"{path}: truncated Darshan log ({size} bytes of {max(e for _s, e, _n in spans)})"
            )
    for (_s, end, name), (start, _e, other) in itertools.pairwise(spans):
        if start < end:
            raise DarshanError(
                f"{path}: corrupt Darshan log: its {name} and {other} regions overlap "
                f"(bytes {start}..{end})"
            )


def _inflate(path: Path, fh: BinaryIO, layout: Layout, name: str) -> bytes:
    """A region decompressed as darshan-util does: zlib or bzip2 streams, one after another.

    Only the job and name regions are kept; a module region is decompressed to
    check it and counted, so a large log costs time, not memory.
    """
    off, length = layout.regions[name]
    fh.seek(off)
    raw = fh.read(length)
    if layout.compression == "none":
        return raw
    keep: list[bytes] | None = [] if name in ("job", "names") else None
    stream = _zlib_stream if layout.compression == "zlib" else _bzip2_stream
    total = 0
    try:
        while raw:
            raw, total = stream(raw, keep, total)
            if total > MAX_REGION:
                raise DarshanError(
                    f"{path}: corrupt Darshan log: its {name} region decompresses to more "
                    f"than {MAX_REGION} bytes"
                )
    except (zlib.error, OSError, EOFError, ValueError) as err:
        raise DarshanError(
            f"{path}: corrupt Darshan log: its {name} region does not decompress "
            f"({layout.compression}: {err})"
        ) from err
    except _Cut as err:
        raise DarshanError(
            f"{path}: corrupt Darshan log: its {name} region ends inside a "
            f"{layout.compression} stream (cut short or overwritten)"
        ) from err
    return b"".join(keep or [])


class _Cut(Exception):
    """A compressed stream without its end."""


def _zlib_stream(raw: bytes, keep: list[bytes] | None, total: int) -> tuple[bytes, int]:
    """One zlib stream of ``raw``: what follows it and the bytes decompressed so far."""
    d = zlib.decompressobj()
    while True:
        chunk = d.decompress(raw, _STEP)
        total += len(chunk)
        if keep is not None:
            keep.append(chunk)
        if d.eof:
            return d.unused_data, total
        if not chunk or total > MAX_REGION:
            if total > MAX_REGION:
                return b"", total
            raise _Cut
        raw = d.unconsumed_tail


def _bzip2_stream(raw: bytes, keep: list[bytes] | None, total: int) -> tuple[bytes, int]:
    """One bzip2 stream of ``raw``, as :func:`_zlib_stream`."""
    d = bz2.BZ2Decompressor()
    chunk = d.decompress(raw, _STEP)
    while True:
        total += len(chunk)
        if keep is not None:
            keep.append(chunk)
        if d.eof:
            return d.unused_data, total
        if d.needs_input or total > MAX_REGION:
            if total > MAX_REGION:
                return b"", total
            raise _Cut
        chunk = d.decompress(b"", _STEP)


def _check_names(path: Path, data: bytes, layout: Layout) -> None:
    """Name records end exactly at the region's end (darshan-util asserts it)."""
    at, order = 0, "<" if layout.little else ">"
    old = layout.format == (3, 0)
    while at < len(data):
        if old:  # 3.00: id, uint32 length, the name without a NUL
            if len(data) - at < 12:
                break
            (n,) = struct.unpack_from(f"{order}I", data, at + 8)
            end = at + 12 + n
        else:
            end = data.find(b"\0", at + 8) + 1
            if end == 0 or len(data) - at < 9:
                break
        if end > len(data):
            break
        at = end
    if at != len(data):
        raise DarshanError(
            f"{path}: corrupt Darshan log: its name records stop inside a record "
            f"(byte {at} of {len(data)} decompressed)"
        )
