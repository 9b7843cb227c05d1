"""The POSIX backend's exports: the ``os`` calls it makes, and the same job for fio."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Target
from iotune.backends.posix.knobs import PosixKnobs
from iotune.core.units import format_size


def posix_code(settings: Mapping[str, Any]) -> str:
    """Python ``os`` calls that write as the posix trial did."""
    knobs = PosixKnobs.of(settings)
    flags = ["os.O_WRONLY", "os.O_CREAT"]
    flags += ["os.O_DIRECT"] if knobs.direct == "on" else []
    flags += ["os.O_DSYNC"] if knobs.sync == "dsync" else []
    lines = ["import os", f"fd = os.open(path, {' | '.join(flags)}, 0o644)"]
    if knobs.preallocate == "on":
        lines.append("os.posix_fallocate(fd, 0, total_bytes)")
    lines.append(f"# pwrite in {format_size(int(knobs.transfer_size))} pieces")
    if knobs.direct == "on":
        lines.append("# O_DIRECT: page-aligned buffers, offsets and sizes")
    # fsync after the last write; dsync made every write durable already
    end = {"fdatasync": "os.fdatasync(fd)", "dsync": None}.get(knobs.sync, "os.fsync(fd)")
    lines += [end] if end else []
    if knobs.fadvise != "none":
        lines.append(
            f"# reading: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_{knobs.fadvise.upper()})"
        )
    return "\n".join([*lines, "os.close(fd)"])


def fio_args(settings: Mapping[str, Any], target: Target) -> list[str]:
    """A ``fio`` job writing the same bytes the same way, to compare with iotune's figure."""
    import numpy as np

    knobs = PosixKnobs.of(settings)
    total = int(np.prod(target.shape)) * target.itemsize
    args = ["fio", "--name=iotune", "--rw=write", "--ioengine=psync"]
    args += [f"--bs={int(knobs.transfer_size)}", f"--size={total}"]
    args.append(f"--fallocate={'posix' if knobs.preallocate == 'on' else 'none'}")
    if knobs.direct == "on":
        args.append("--direct=1")
    ends = {"fsync": ["--end_fsync=1"], "fdatasync": ["--end_fsync=1"], "dsync": ["--sync=dsync"]}
    return args + ends[knobs.sync]
