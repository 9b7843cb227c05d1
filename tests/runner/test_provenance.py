"""Provenance facts, each compared with the same fact measured here independently.

What varies by machine (the file system of the scratch, a virtio balloon, a git
checkout) is measured first from its own source (``findmnt``/``statfs``, sysfs,
``/proc``, ``git``, the libraries' own ``__version__``), and the test asserts
the exact value iotune must record for what was found.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import iotune.runner.provenance as provenance
from iotune.runner.provenance import collect, free_page_reporting, mount_of


def _virtio(root: Path, name: str, device: str, features: str) -> None:
    node = root / "bus/virtio/devices" / name
    node.mkdir(parents=True)
    (node / "device").write_text(device + "\n")
    (node / "features").write_text(features + "\n")


def _bits(*on: int) -> str:
    return "".join("1" if i in on else "0" for i in range(64))


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    _virtio(tmp_path, "virtio1", "0x0002", _bits(5, 9))  # a block device: bit 5 means else
    params = tmp_path / "module/page_reporting/parameters"
    params.mkdir(parents=True)
    (params / "page_reporting_order").write_text("9\n")
    return tmp_path


def test_balloon_with_the_reporting_feature_is_on(sysfs: Path) -> None:
    _virtio(sysfs, "virtio0", "0x0005", _bits(1, 2, 5))
    assert free_page_reporting(sysfs) == "on (virtio-balloon, page order 9)"


def test_balloon_without_the_feature_and_other_devices_are_not_reporting(sysfs: Path) -> None:
    _virtio(sysfs, "virtio0", "0x0005", _bits(1, 2))
    assert free_page_reporting(sysfs) == "not detected"


def test_no_virtio_at_all(tmp_path: Path) -> None:
    assert free_page_reporting(tmp_path) == "not detected"


def test_a_hold_off_time_is_recorded_when_set(sysfs: Path) -> None:
    _virtio(sysfs, "virtio0", "0x0005", _bits(5))
    held = sysfs / "module/page_reporting/parameters/min_free_ms"
    held.write_text("0\n")
    assert free_page_reporting(sysfs) == "on (virtio-balloon, page order 9)"
    held.write_text("60000\n")
    assert free_page_reporting(sysfs) == "on (virtio-balloon, page order 9, held ms 60000)"


# --- independent measurements ------------------------------------------------


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _expected_reporting(sysfs: Path = Path("/sys")) -> str:
    """Free page reporting as the virtio spec defines it: a balloon (device id 5)
    that negotiated feature bit 5 (VIRTIO_BALLOON_F_REPORTING)."""
    devices = sysfs / "bus/virtio/devices"
    reporting = False
    for device in devices.iterdir() if devices.is_dir() else ():
        kind, bits = _read(device / "device"), _read(device / "features")
        if kind is not None and bits is not None and int(kind, 16) == 5:
            reporting = reporting or (len(bits) > 5 and bits[5] == "1")
    if not reporting:
        return "not detected"
    params = sysfs / "module/page_reporting/parameters"
    parts = ["virtio-balloon"]
    order, held = _read(params / "page_reporting_order"), _read(params / "min_free_ms")
    if order is not None:
        parts.append(f"page order {order}")
    if held not in (None, "", "0"):
        parts.append(f"held ms {held}")
    return "on (" + ", ".join(parts) + ")"


def _visible_mount(path: Path) -> dict[str, str]:
    """The mount ``path`` is on, by util-linux: the last one listed is the one on top."""
    if shutil.which("findmnt") is None:
        pytest.skip("findmnt (util-linux) is needed to measure the mount independently")
    out = subprocess.run(
        ["findmnt", "-n", "-P", "-v", "-o", "FSTYPE,TARGET,SOURCE", "--target", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    fields = dict(re.findall(r'(\w+)="([^"]*)"', out[-1]))
    return {"fs_type": fields["FSTYPE"], "mount": fields["TARGET"], "device": fields["SOURCE"]}


#: ``stat -f -c %T`` (the kernel's statfs magic) -> the mountinfo type names it covers
_STATFS_NAMES = {
    "ext2/ext3": {"ext2", "ext3", "ext4"},
    "xfs": {"xfs"},
    "btrfs": {"btrfs"},
    "tmpfs": {"tmpfs"},
    "ramfs": {"ramfs"},
    "overlayfs": {"overlay"},
    "proc": {"proc"},
    "sysfs": {"sysfs"},
    "nfs": {"nfs", "nfs4"},
    "zfs": {"zfs"},
}


def _statfs_type(path: Path) -> str | None:
    if shutil.which("stat") is None:
        return None
    out = subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def _cpu_model() -> str:
    text = _read(Path("/proc/cpuinfo")) or ""
    found = re.search(r"^model name\s*:\s*(.*)$", text, re.MULTILINE)
    return found.group(1).strip() if found else platform.processor() or platform.machine()


def _online_cpus() -> int:
    ranges = _read(Path("/sys/devices/system/cpu/online"))
    if not ranges:
        return os.cpu_count() or 0
    count = 0
    for part in ranges.split(","):
        low, _, high = part.partition("-")
        count += int(high or low) - int(low) + 1
    return count


def _memory_bytes() -> int:
    text = _read(Path("/proc/meminfo")) or ""
    found = re.search(r"^MemTotal:\s*(\d+) kB$", text, re.MULTILINE)
    if not found:
        pytest.skip("no MemTotal in /proc/meminfo to compare with")
    return int(found.group(1)) * 1024


LIBRARIES = (
    *("iotune", "numpy", "xarray", "netCDF4", "h5py", "zarr", "numcodecs", "dask", "mpi4py"),
    *("obstore", "s3fs", "fsspec"),  # the object-store clients
    "torch",  # the batches pattern's DataLoader
    "xbatcher",  # and its BatchGenerator
)

_VERSIONS_SCRIPT = f"""
import importlib, importlib.util, json, sys
found = {{}}
for name in {LIBRARIES!r}:
    if importlib.util.find_spec(name) is not None:
        found[name] = importlib.import_module(name).__version__
if "netCDF4" in found:
    import netCDF4
    found["netcdf-c"] = netCDF4.__netcdf4libversion__
    found["hdf5_in_netCDF4"] = netCDF4.__hdf5libversion__
print(json.dumps(found))
"""


def _library_versions() -> dict[str, str]:
    """Each installed library's own ``__version__``, asked in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", _VERSIONS_SCRIPT], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


# --- collect() on this machine -----------------------------------------------


def test_collect_records_this_machine_and_the_scratch_mount(tmp_path: Path) -> None:
    attrs = collect(tmp_path)
    uname = os.uname()
    mount = _visible_mount(tmp_path)
    expected = {
        "host": uname.nodename,
        "kernel": f"{uname.sysname} {uname.release}",
        "cpu": _cpu_model(),
        "cpu_count": str(_online_cpus()),
        "memory_bytes": str(_memory_bytes()),
        "scratch": str(tmp_path),
        "scratch_fs_type": mount["fs_type"],
        "scratch_mount": mount["mount"],
        "scratch_device": mount["device"],
        "free_page_reporting": _expected_reporting(),
        "command": " ".join(sys.argv),
    }
    assert {k: attrs[k] for k in expected} == expected
    statfs = _statfs_type(tmp_path)
    if statfs in _STATFS_NAMES:  # the kernel's own word on the type, where it is unambiguous
        assert attrs["scratch_fs_type"] in _STATFS_NAMES[statfs]
    assert set(attrs) == {*expected, "git_commit"} | {
        f"version_{name}" for name in ("python", *_library_versions())
    }


def test_collect_records_the_version_of_every_installed_library(tmp_path: Path) -> None:
    versions = {k: v for k, v in collect(tmp_path).items() if k.startswith("version_")}
    python = "{}.{}.{}".format(*sys.version_info[:3])
    expected = {"version_python": python} | {
        f"version_{name}": version for name, version in _library_versions().items()
    }
    if sys.version_info.releaselevel != "final":  # 3.14.0rc1 and the like
        assert versions.pop("version_python").startswith(python)
        expected.pop("version_python")
    assert versions == expected
    assert versions["version_iotune"]  # the package itself is always installed here


@pytest.mark.parametrize("where", ["/", "/proc", "/sys", "/dev/shm", "tmp"])
def test_mount_of_is_the_mount_findmnt_finds(tmp_path: Path, where: str) -> None:
    path = tmp_path if where == "tmp" else Path(where)
    if not path.exists():
        pytest.skip(f"{where} does not exist here")
    assert mount_of(path) == _visible_mount(path)


_STACKED = """
set -e
mount --make-rprivate /
mount -t tmpfs below {dir}
mount -t ramfs above {dir}
{python} -c 'import json, sys; from iotune.runner.provenance import mount_of
print(json.dumps(mount_of(sys.argv[1])))' {dir}
"""


def test_of_two_mounts_on_one_directory_the_one_on_top_is_recorded(tmp_path: Path) -> None:
    """In a private mount namespace (root only), a ramfs mounted over a tmpfs."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) to stack mounts in a private namespace")
    script = _STACKED.format(dir=tmp_path, python=sys.executable)
    out = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"cannot stack mounts here: {out.stderr.strip()}")
    assert json.loads(out.stdout) == {"fs_type": "ramfs", "mount": str(tmp_path), "device": "above"}


# --- git_commit --------------------------------------------------------------


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def _expected_commit(package: Path) -> tuple[str, bool]:
    """HEAD of the checkout holding ``package``, and whether the package has changes."""
    head = _git("rev-parse", "HEAD", cwd=package)
    if head.returncode != 0:
        return "unknown", False
    changed = _git("status", "--porcelain", "--", ".", cwd=package).stdout.strip()
    return head.stdout.strip(), bool(changed)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_collect_records_the_commit_of_the_code_that_measured(tmp_path: Path) -> None:
    package = Path(provenance.__file__).resolve().parents[1]  # .../iotune
    before = _expected_commit(package)
    recorded = collect(tmp_path)["git_commit"]
    after = _expected_commit(package)
    if before != after:  # someone edited the checkout meanwhile: either state is right
        pytest.skip("the checkout changed while collecting; the measurement is ambiguous")
    head, changed = before
    if head == "unknown":  # installed from a wheel, not run from a checkout
        assert recorded == "unknown"
    elif not changed:
        assert recorded == head
    else:
        assert recorded == f"{head}-dirty"


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A git repository holding a copy of provenance.py at iotune/runner/, committed;
    returns the repository and the copy's git_commit."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # no repository above
    repo = tmp_path / "repo"
    for name in (
        "iotune/runner/provenance.py",
        "iotune/backends/memory/backend.py",
        "iotune/app/api.py",
    ):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(f"# {name}\n")
    shutil.copy(provenance.__file__, repo / "iotune/runner/provenance.py")
    (repo / "README.md").write_text("readme\n")
    spec = importlib.util.spec_from_file_location(
        "provenance_copy", repo / "iotune/runner/provenance.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return repo, module.git_commit


def _commit(repo: Path) -> str:
    for args in (
        ("init", "-q"),
        ("add", "-A"),
        ("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "c"),
    ):
        assert _git(*args, cwd=repo).returncode == 0
    return _git("rev-parse", "HEAD", cwd=repo).stdout.strip()


def test_outside_any_checkout_the_commit_is_unknown(checkout) -> None:
    _repo, git_commit = checkout
    assert git_commit() == "unknown"


def test_a_clean_checkout_records_its_head(checkout) -> None:
    repo, git_commit = checkout
    head = _commit(repo)
    assert len(head) == 40
    assert git_commit() == head
    (repo / "README.md").write_text("changed, but not the package\n")
    (repo / "results").mkdir()
    (repo / "results/new.nc").write_text("x")
    assert git_commit() == head


@pytest.mark.parametrize(
    "changed",
    [
        "iotune/runner/provenance.py",
        "iotune/runner/new_module.py",
        "iotune/backends/memory/backend.py",
        "iotune/app/api.py",
    ],
)
def test_any_change_to_the_package_marks_the_commit_dirty(checkout, changed: str) -> None:
    repo, git_commit = checkout
    head = _commit(repo)
    with (repo / changed).open("a") as fh:
        fh.write("# edited\n")
    assert git_commit() == f"{head}-dirty"
