"""Lustre: detect the scratch file system and set and read back striping with ``lfs``.

Striping must be chosen before a file exists: a file takes its layout from
its directory when it is created and cannot change it later.  So each trial
gets a fresh directory, ``lfs setstripe -c COUNT -S SIZE DIR`` runs on it
while it is empty, and after writing ``lfs getstripe FILE`` shows what the
file really got (Lustre may give fewer stripes than asked).

On any other file system the stripe settings cannot be applied; that is
recorded with the file system type, never silently ignored.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

from iotune.core.errors import LustreError, StripingWarning

LUSTRE_MAGIC = 0x0BD00BD0
#: statfs(2) f_type values of file systems HPC scratch space lives on
MAGIC_NAMES = {
    LUSTRE_MAGIC: "lustre",
    0xEF53: "ext4",
    0x58465342: "xfs",
    0x9123683E: "btrfs",
    0x01021994: "tmpfs",
    0x6969: "nfs",
    0x47504653: "gpfs",
    0x2FC12FC1: "zfs",
    0x19830326: "beegfs",
    0xAAD7AAEA: "panfs",
    0x00C36400: "ceph",
    0x794C7630: "overlay",
    0x65735546: "fuse",
}
#: set to a type name (e.g. ``lustre``) to override detection, as tests do
ENV_FS_TYPE = "IOTUNE_FS_TYPE"
LFS_TIMEOUT_S = 120
_warned: set[str] = set()


def statfs_magic(path: str | Path) -> int:
    """The ``f_type`` magic number ``statfs(2)`` reports for ``path``."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    buf = ctypes.create_string_buffer(256)  # struct statfs is 120 bytes on Linux
    if libc.statfs(os.fsencode(str(path)), buf) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"statfs failed: {os.strerror(err)}", str(path))
    # f_type is the first member, a C long (__fsword_t) on Linux
    return ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF


def fs_type(path: str | Path, *, override: str | None = None) -> str:
    """Name of the file system holding ``path``: ``lustre``, ``ext4``, ... or its magic.

    ``override`` (or the ``IOTUNE_FS_TYPE`` environment variable) replaces
    detection, so tests can exercise the Lustre path anywhere.
    """
    forced = override or os.environ.get(ENV_FS_TYPE)
    if forced:
        return forced
    magic = statfs_magic(path)
    return MAGIC_NAMES.get(magic, f"0x{magic:08x}")


def _lfs(args: list[str]) -> str:
    lfs = shutil.which("lfs")
    if lfs is None:
        raise LustreError("the scratch directory is on Lustre but 'lfs' is not on PATH")
    try:
        done = subprocess.run(
            [lfs, *args], capture_output=True, text=True, timeout=LFS_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as err:
        raise LustreError(f"lfs {' '.join(args)} did not finish in {LFS_TIMEOUT_S} s") from err
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip() or "no message").splitlines()[0]
        raise LustreError(f"lfs {args[0]} failed (exit {done.returncode}): {said}")
    return done.stdout


def setstripe(directory: Path, *, count: int | None, size: int | None) -> list[str]:
    """Run ``lfs setstripe -c COUNT -S SIZE DIRECTORY`` and return the arguments used."""
    args = ["setstripe"]
    if count is not None:
        args += ["-c", str(count)]
    if size is not None:
        args += ["-S", str(size)]
    args.append(str(directory))
    _lfs(args)
    return args


def parse_getstripe(text: str) -> dict[str, int]:
    """Stripe count and size from ``lfs getstripe`` output.

    Accepts the file form (``lmm_stripe_count:   4`` on its own line) and
    the directory form (``stripe_count:  4 stripe_size:  8388608 ...``); with
    a composite (PFL) layout the first component is reported.
    """
    found: dict[str, int] = {}
    for key in ("stripe_count", "stripe_size", "stripe_offset"):
        match = re.search(rf"(?:lmm_)?{key}:\s*(-?\d+)", text)
        if match:
            found[key] = int(match.group(1))
    if "stripe_count" not in found:
        first = text.strip().splitlines()[0] if text.strip() else "(nothing)"
        raise LustreError(f"cannot read a stripe count from lfs getstripe output: {first!r}")
    return found


def getstripe(path: Path) -> dict[str, int]:
    """The layout ``lfs getstripe PATH`` reports for a file or directory."""
    return parse_getstripe(_lfs(["getstripe", str(path)]))


def prepare(
    directory: Path, *, count: int | None, size: int | None, fs: str | None = None
) -> dict[str, Any]:
    """Create ``directory`` fresh and stripe it when the file system is Lustre.

    Returns
    -------
    dict
        ``applied`` (bool), ``fs_type``, ``requested`` and, on Lustre, the
        ``setstripe`` arguments.  Nothing is requested when both are None.
    """
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    fs = fs or fs_type(directory)
    requested = {k: v for k, v in (("stripe_count", count), ("stripe_size", size)) if v is not None}
    info: dict[str, Any] = {"fs_type": fs, "requested": requested, "applied": False}
    if not requested:
        return info
    if fs != "lustre":
        note_not_applied(fs)
        return info
    info["setstripe"] = setstripe(directory, count=count, size=size)
    info["applied"] = True
    return info


def not_applied_note(fs: str) -> str:
    return f"stripe_count/stripe_size not applied: the scratch file system is {fs}, not Lustre"


def note_not_applied(fs: str) -> None:
    """Say once per process (so once per sweep and worker) that striping was not applied."""
    if fs not in _warned:
        _warned.add(fs)
        warnings.warn(not_applied_note(fs), StripingWarning, stacklevel=3)
