"""What a write in slab order holds: the row of chunks a slab leaves incomplete."""

import pytest

from iotune.backends.h5py.backend import H5pyBackend
from iotune.backends.hdf5_family import write_cache
from iotune.backends.netcdf4.backend import NetCDF4Backend
from iotune.measuring.data import write_slab_length
from iotune.model.spec import Workload

MiB = 2**20
#: 4 MiB per step: the runner's 32 MiB slabs are 8 steps
W = Workload(("time", "y", "x"), (32, 1024, 1024), dtype="float32")


def test_a_slab_thinner_than_a_chunk_needs_the_row_of_chunks():
    assert write_slab_length(W, {"chunks": "16x256x256"}) == 8
    cache = write_cache({"chunks": "16x256x256"}, W, 8)
    assert (cache.nbytes, cache.chunks) == (16 * 16 * 256 * 256 * 4, 16)


def test_a_slab_straddling_two_rows_holds_both():
    cache = write_cache({"chunks": "12x512x512"}, W, 8)
    assert cache.chunks == 8 and cache.nbytes == 8 * 12 * 512 * 512 * 4


@pytest.mark.parametrize(
    "params",
    [
        {"chunks": "8x256x256"},  # slabs fill whole chunks
        {"chunks": "16x256x256", "chunk_cache": 2 * MiB},  # the trial's own cache
        {"chunks": "contiguous"},
        {"chunks": "auto"},
    ],
)
def test_no_write_cache_where_the_write_needs_none(params):
    assert write_cache(params, W, write_slab_length(W, params)) is None


def _backend_params(backend, **given):
    effective, _notes = backend.resolve(given, W)
    return effective


def test_netcdf4_writer_holds_the_row_and_records_it(tmp_path):
    backend = NetCDF4Backend()
    params = _backend_params(backend, chunks=(16, 256, 256), codec="zlib", level=1)
    writer = backend.open_writer(tmp_path / "f.nc", W, params)
    size, slots, _w0 = writer._var.get_var_chunk_cache()
    writer.close()
    assert size == 64 * MiB and slots >= 16
    assert backend.verify(tmp_path / "f.nc", params)["write_cache"] == 64 * MiB


def test_netcdf4_keeps_a_swept_chunk_cache(tmp_path):
    backend = NetCDF4Backend()
    params = _backend_params(backend, chunks=(16, 256, 256), codec="zlib", chunk_cache=2 * MiB)
    writer = backend.open_writer(tmp_path / "f.nc", W, params)
    size = writer._var.get_var_chunk_cache()[0]
    writer.close()
    assert size == 2 * MiB
    assert "write_cache" not in backend.verify(tmp_path / "f.nc", params)


def test_h5py_writer_holds_the_row_and_records_it(tmp_path):
    backend = H5pyBackend()
    params = _backend_params(backend, chunks=(16, 256, 256), codec="zlib", level=1)
    writer = backend.open_writer(tmp_path / "f.h5", W, params)
    _mdc, slots, nbytes, _w0 = writer._file.id.get_access_plist().get_cache()
    writer.close()
    assert nbytes == 64 * MiB and slots >= 16
    assert backend.verify(tmp_path / "f.h5", params)["write_cache"] == 64 * MiB


def test_zarr_writer_holds_slabs_until_a_row_of_chunks_is_whole(tmp_path):
    """8-step slabs into 16-step chunks: each chunk is stored once, whole (never merged)."""
    import numpy as np
    import zarr

    from iotune.backends.slab_rows import RowBuffer
    from iotune.backends.zarr.backend import ZarrBackend

    small = Workload(("time", "y", "x"), (20, 1024, 1024), dtype="float32")
    backend = ZarrBackend()
    params = _backend_params(backend, chunks=(16, 512, 512), codec="none")
    writer = backend.open_writer(tmp_path / "z.zarr", small, params)
    assert isinstance(writer._rows, RowBuffer)
    stored: list[tuple[int, int]] = []
    writer._array = _Recording(writer._array, stored)
    data = np.arange(20 * 2**20, dtype="float32").reshape(small.shape)
    for start in range(0, 20, 8):
        writer.write(start, data[start : start + 8])
    writer.close()
    assert stored == [(0, 16), (16, 20)]  # a row, then the last, shorter one
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "z.zarr", path="data")[:], data)
    assert backend.verify(tmp_path / "z.zarr", params)["write_buffer"] == 16 * 4 * 2**20


class _Recording:
    """The zarr array, with the (start, stop) of each assignment along the first dimension."""

    def __init__(self, array, stored):
        self._array, self._stored = array, stored

    def __setitem__(self, key, value):
        self._stored.append((key.start, key.stop))
        self._array[key] = value


def test_row_buffer_hands_on_whole_rows_and_the_rest():
    import numpy as np

    from iotune.backends.slab_rows import RowBuffer

    rows = RowBuffer(6, 14)
    got = []
    for start in range(0, 14, 4):
        got += rows.add(start, np.arange(start, min(start + 4, 14)))
    got += rows.rest()
    assert [(s, b.tolist()) for s, b in got] == [
        (0, list(range(6))),
        (6, list(range(6, 12))),
        (12, [12, 13]),
    ]
