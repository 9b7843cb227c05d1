import zlib

import numcodecs
import numpy as np
import pytest

from iotune.measuring.data import Field, slab_length
from iotune.model.spec import Workload


def workload(shape=(32, 128, 128), **kw) -> Workload:
    dims = ("time", "z", "y", "x")[-len(shape) :]
    return Workload(dims, shape, **kw)


def ratio(raw: bytes, packed: bytes) -> float:
    return len(raw) / len(packed)


def test_smooth_int16_compresses_like_a_real_field():
    data = Field(workload((32, 256, 256))).slab(0, 32)
    raw = data.tobytes()
    shuffled = bytes(numcodecs.Shuffle(2).encode(data))
    zlib4 = ratio(raw, zlib.compress(shuffled, 4))
    lz4 = ratio(raw, numcodecs.Blosc("lz4", 4, numcodecs.Blosc.SHUFFLE).encode(data))
    bz2 = ratio(raw, numcodecs.BZ2(4).encode(data))
    assert 1.5 <= zlib4 <= 4
    assert bz2 > zlib4 > lz4 > 1.1


def test_smooth_is_correlated_in_space_and_time_but_not_constant():
    data = Field(workload((8, 128, 128))).slab(0, 8).astype(float)
    assert data.std() > 50
    step_x = np.abs(np.diff(data, axis=2)).mean()
    step_t = np.abs(np.diff(data, axis=0)).mean()
    assert step_x < 0.1 * data.std()
    assert step_t < 0.5 * data.std()


def test_random_int16_does_not_compress_and_zeros_are_zero():
    data = Field(workload(field="random")).slab(0, 8)
    assert ratio(data.tobytes(), zlib.compress(data.tobytes(), 4)) < 1.01
    assert not Field(workload(field="zeros")).slab(0, 4).any()


def test_noisy_float32_defeats_blosc_lz4_without_shuffle():
    data = Field(workload(dtype="float32", field="random")).slab(0, 8)
    packed = numcodecs.Blosc("lz4", 5, numcodecs.Blosc.NOSHUFFLE).encode(data)
    assert ratio(data.tobytes(), packed) < 1.05


@pytest.mark.parametrize("kind", ["smooth", "random"])
@pytest.mark.parametrize("dtype", ["int16", "uint16", "int32", "float32", "float64"])
def test_slabs_are_deterministic_and_independent_of_how_the_array_is_cut(kind, dtype):
    w = workload((12, 32, 48), field=kind, dtype=dtype, seed=3)
    whole = Field(w).slab(0, 12)
    pieces = np.concatenate([s for _, s in Field(w).slabs(5)])
    assert whole.dtype == np.dtype(dtype)
    assert whole.shape == (12, 32, 48)
    np.testing.assert_array_equal(whole, pieces)
    np.testing.assert_array_equal(Field(w).slab(7, 9), whole[7:9])


def test_seed_changes_the_data():
    a = Field(workload(seed=0)).slab(0, 2)
    b = Field(workload(seed=1)).slab(0, 2)
    assert not np.array_equal(a, b)


def test_four_dimensional_workload():
    data = Field(workload((4, 8, 32, 32))).slab(0, 4)
    assert data.shape == (4, 8, 32, 32)
    assert np.ptp(data) > 0


def test_slab_length_keeps_memory_bounded_and_follows_chunks():
    big = workload((10_000, 512, 512))  # 5 GiB of int16
    n = slab_length(big)
    assert n * 512 * 512 * 2 <= 64 * 2**20
    assert slab_length(big, align=8) % 8 == 0
    assert slab_length(workload((16, 64, 64)), align=16) == 16
