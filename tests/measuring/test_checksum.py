"""The read-back checksum: CRC-32C, piece by piece, on the CPU's instruction."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.measuring.checksum import checksum


def test_the_standard_check_value_of_crc32c():
    # the check value of CRC-32C (Castagnoli), RFC 3720 B.4 / the CRC catalogue
    assert checksum(b"123456789") == 0xE3069283


def test_pieces_continue_to_the_checksum_of_the_whole():
    data = np.random.default_rng(0).integers(0, 2**15, size=(8, 64, 33), dtype=np.int16)
    whole = checksum(data)
    crc = 0
    for piece in np.array_split(data, 5):
        crc = checksum(piece, crc)
    assert crc == whole
    assert checksum(data.tobytes()) == whole


def test_a_non_contiguous_array_is_checksummed_in_c_order():
    data = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    view = data.transpose(2, 1, 0)
    assert checksum(view) == checksum(np.ascontiguousarray(view).tobytes())


@pytest.mark.parametrize("flip", [0, 1, 4095])
def test_one_changed_byte_changes_the_checksum(flip):
    data = np.zeros(4096, np.uint8)
    before = checksum(data)
    data[flip] = 1
    assert checksum(data) != before


def test_the_cpu_instruction_is_used_on_x86_64_and_arm64():
    # a software fallback is ~20x slower: verification would cost sweeps real time
    import platform

    import crc32c

    if platform.machine() not in ("x86_64", "AMD64", "aarch64", "arm64"):
        pytest.skip(f"no CRC instruction expected on {platform.machine()}")
    assert crc32c.hardware_based
