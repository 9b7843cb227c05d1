"""Where and with what a sweep ran: host, kernel, CPU, file system, versions."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import socket
import subprocess
import sys
from pathlib import Path

LIBRARIES = (
    "numpy",
    "xarray",
    "netCDF4",
    "h5py",
    "zarr",
    "numcodecs",
    "dask",
    "mpi4py",
    "obstore",
    "s3fs",
    "fsspec",
    "torch",  # the batches pattern's DataLoader (runner/torch_loader.py)
    "xbatcher",  # its BatchGenerator (runner/xbatcher_loader.py)
)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def mount_of(path: Path) -> dict[str, str]:
    """File system type, mount point and source of the mount holding ``path``."""
    target = str(Path(path).resolve())
    best = {"fs_type": "unknown", "mount": "unknown", "device": "unknown"}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return best
    length = -1
    for line in lines:
        left, _, right = line.partition(" - ")
        mount = left.split()[4].replace("\\040", " ")
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        # >=: of mounts stacked on one directory the last listed is the visible one
        if inside and len(mount) >= length:
            fs_type, device = [*right.split(), "", ""][:2]
            best = {"fs_type": fs_type, "mount": mount, "device": device}
            length = len(mount)
    return best


VIRTIO_BALLOON = "0x0005"
VIRTIO_BALLOON_F_REPORTING = 5  # feature bit, virtio spec 5.5.3


def free_page_reporting(sysfs: Path = Path("/sys")) -> str:
    """Whether this (virtual) machine hands freed memory back to its host.

    With virtio-balloon free page reporting, pages freed for longer than a
    moment go back to the hypervisor and must be faulted in again when the page
    cache next needs them, so a write that follows a pause (a new process, data
    generation) runs slower than the same write in a tight loop.  Recorded so
    that such figures can be told apart; see docs/benchmarks.md.
    """
    for device in sorted((sysfs / "bus/virtio/devices").glob("*")):
        try:
            kind = (device / "device").read_text().strip()
            features = (device / "features").read_text().strip()
        except OSError:
            continue
        if (
            kind == VIRTIO_BALLOON
            and features[VIRTIO_BALLOON_F_REPORTING : VIRTIO_BALLOON_F_REPORTING + 1] == "1"
        ):
            return "on (" + ", ".join(["virtio-balloon", *_reporting_params(sysfs)]) + ")"
    return "not detected"


def _reporting_params(sysfs: Path) -> list[str]:
    """The reporting granularity and, where the kernel has it, the hold-off time."""
    params = sysfs / "module/page_reporting/parameters"
    found = []
    for name, label in (("page_reporting_order", "page order"), ("min_free_ms", "held ms")):
        try:
            value = (params / name).read_text().strip()
        except OSError:
            continue
        if name == "page_reporting_order" or value not in {"", "0"}:
            found.append(f"{label} {value}")
    return found


def git_commit() -> str:
    here = Path(__file__).resolve().parents[1]  # the whole package, not this folder
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() + ("-dirty" if dirty else "")


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in ("iotune", *LIBRARIES):
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    if "netCDF4" in sys.modules or "netCDF4" in found:
        import netCDF4

        found["netcdf-c"] = netCDF4.__netcdf4libversion__
        found["hdf5_in_netCDF4"] = netCDF4.__hdf5libversion__
    return found


def collect(scratch: Path) -> dict[str, str]:
    """Provenance attributes for a results Dataset, all strings, prefixed by kind."""
    uname = platform.uname()
    mount = mount_of(scratch)
    attrs = {
        "host": socket.gethostname(),
        "kernel": f"{uname.system} {uname.release}",
        "cpu": cpu_model(),
        "cpu_count": str(os.cpu_count()),
        "memory_bytes": str(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")),
        "scratch": str(scratch),
        "scratch_fs_type": mount["fs_type"],
        "scratch_mount": mount["mount"],
        "scratch_device": mount["device"],
        "free_page_reporting": free_page_reporting(),
        "git_commit": git_commit(),
        "command": " ".join(sys.argv),
    }
    attrs.update({f"version_{k}": v for k, v in versions().items()})
    return attrs
