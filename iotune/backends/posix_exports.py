"""The POSIX backend's exports: the ``os`` calls it makes, and the same job for fio."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Target
from iotune.core.units import format_size


def posix_code(settings: Mapping[str, Any]) -> str:
    """Python ``os`` calls that write as the posix trial did."""
    flags = ["os.O_WRONLY", "os.O_CREAT"]
    flags += ["os.O_DIRECT"] if settings.get("direct") == "on" else []
    flags += ["os.O_DSYNC"] if settings.get("sync") == "dsync" else []
    lines = ["import os", f"fd = os.open(path, {' | '.join(flags)}, 0o644)"]
    if settings.get("preallocate") == "on":
        lines.append("os.posix_fallocate(fd, 0, total_bytes)")
    lines.append(f"# pwrite in {format_size(int(settings.get('transfer_size') or 2**20))} pieces")
    if settings.get("direct") == "on":
        lines.append("# O_DIRECT: page-aligned buffers, offsets and sizes")
    end = {"fdatasync": "os.fdatasync(fd)", "dsync": None}.get(str(settings.get("sync")))
    lines += [end] if end else ([] if settings.get("sync") == "dsync" else ["os.fsync(fd)"])
    fadvise = settings.get("fadvise")
    if fadvise and fadvise != "none":
        advice = f"os.POSIX_FADV_{str(fadvise).upper()}"
        lines.append(f"# reading: os.posix_fadvise(fd, 0, 0, {advice})")
    return "\n".join([*lines, "os.close(fd)"])


def fio_args(settings: Mapping[str, Any], target: Target) -> list[str]:
    """A ``fio`` job writing the same bytes the same way, to compare with iotune's figure."""
    import numpy as np

    total = int(np.prod(target.shape)) * target.itemsize
    args = ["fio", "--name=iotune", "--rw=write", "--ioengine=psync"]
    args += [f"--bs={int(settings.get('transfer_size') or 2**20)}", f"--size={total}"]
    args.append(f"--fallocate={'posix' if settings.get('preallocate') == 'on' else 'none'}")
    if settings.get("direct") == "on":
        args.append("--direct=1")
    sync = settings.get("sync") or "fsync"
    args += {"fsync": ["--end_fsync=1"], "fdatasync": ["--end_fsync=1"], "dsync": ["--sync=dsync"]}[
        sync
    ]
    return args
