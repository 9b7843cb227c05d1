import numpy as np
import pytest

from iotune.backends.memory import MemoryBackend
from iotune.run.access import selections
from iotune.run.data import Field
from iotune.spec.model import ReadSpec, Workload

W = Workload(("time", "y", "x"), (10, 48, 40))


def write(path, params, slab=3):
    backend = MemoryBackend()
    writer = backend.open_writer(path, W, params)
    data = Field(W).slab(0, W.shape[0])
    for start in range(0, W.shape[0], slab):
        writer.write(start, data[start : start + slab])
    writer.close()
    return backend, data


@pytest.mark.parametrize("codec", ["none", "zlib", "bzip2", "zstd", "blosc-lz4", "blosc-zstd"])
@pytest.mark.parametrize("chunks", [(4, 16, 16), (1, 48, 40), (10, 7, 9), "contiguous"])
def test_round_trip_for_every_pattern(tmp_path, codec, chunks):
    params, _ = MemoryBackend.resolve({"codec": codec, "chunks": chunks}, W)
    backend, data = write(tmp_path / "m", params)
    read = ReadSpec(("full", "spatial", "timeseries", "random"), (), 5, 7, ())
    reader = backend.open_reader(tmp_path / "m", W, params)
    for pattern in read.patterns:
        for sel in selections(pattern, W, read):
            np.testing.assert_array_equal(reader.read(sel), data[sel])
    stored = backend.stored_bytes(tmp_path / "m")
    if codec == "none":
        assert stored == data.nbytes
    else:
        assert stored < data.nbytes
    backend.remove(tmp_path / "m")
    assert backend.stored_bytes(tmp_path / "m") == 0


def test_memory_backend_has_no_files_and_is_cpu_bound():
    assert MemoryBackend.in_memory and not MemoryBackend.io_bound
    assert MemoryBackend().paths(__import__("pathlib").Path("x")) == []
