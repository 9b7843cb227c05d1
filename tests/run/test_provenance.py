"""Provenance facts: the mount holding the scratch, and free page reporting."""

from __future__ import annotations

from pathlib import Path

import pytest

from iotune.run.provenance import collect, free_page_reporting, mount_of


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


def test_collect_records_it_beside_the_scratch_mount(tmp_path: Path) -> None:
    attrs = collect(tmp_path)
    assert attrs["free_page_reporting"] in {"not detected"} or attrs[
        "free_page_reporting"
    ].startswith("on (")
    assert attrs["scratch_mount"] == mount_of(tmp_path)["mount"]
    assert all(isinstance(v, str) for v in attrs.values())


def test_a_hold_off_time_is_recorded_when_set(sysfs: Path) -> None:
    _virtio(sysfs, "virtio0", "0x0005", _bits(5))
    held = sysfs / "module/page_reporting/parameters/min_free_ms"
    held.write_text("0\n")
    assert free_page_reporting(sysfs) == "on (virtio-balloon, page order 9)"
    held.write_text("60000\n")
    assert free_page_reporting(sysfs) == "on (virtio-balloon, page order 9, held ms 60000)"
