import os
from pathlib import Path

import numpy as np
import pytest

from iotune.backends import get_backend
from iotune.backends.posix import PosixBackend
from iotune.errors import UsageError, VerificationError
from iotune.measuring import access
from iotune.measuring.data import Field
from iotune.model.spec import ReadSpec, Workload

W = Workload(("time", "y", "x"), (8, 32, 48))
READ = ReadSpec(patterns=("full", "spatial", "timeseries"), timeseries_pixels=6)


def params(**kw):
    effective, _notes = PosixBackend.resolve(kw, W)
    return effective


def write(path, p, workload=W, cut=5):
    writer = PosixBackend().open_writer(path, workload, p)
    data = Field(workload).slab(0, workload.shape[0])
    writer.write(0, data[:cut])
    writer.write(cut, data[cut:])
    writer.close()
    return data


WORKLOADS = [
    Workload(("time", "y", "x"), (8, 32, 48), dtype="int16"),
    Workload(("time", "y", "x"), (8, 32, 48), dtype="float64"),
    Workload(("time", "z", "y", "x"), (6, 3, 16, 20), dtype="int16", field="random"),
    Workload(("time", "z", "y", "x"), (6, 3, 16, 20), dtype="float64"),
]
READS = [READ, ReadSpec(READ.patterns, (("time", 3), ("y", 0.25), ("x", 1.0)), 3)]


@pytest.mark.parametrize("transfer", ["4KiB", "1MiB", 3000, 1])
@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: f"{w.dtype}-{len(w.shape)}d")
def test_round_trip_with_the_selections_of_every_read_pattern(tmp_path, workload, transfer):
    p = PosixBackend.resolve({"transfer_size": transfer}, workload)[0]
    path = tmp_path / "f.bin"
    data = write(path, p, workload, cut=workload.shape[0] // 2 + 1)
    assert path.stat().st_size == workload.nbytes
    assert path.read_bytes() == data.tobytes()
    reader = PosixBackend().open_reader(path, workload, p)
    try:
        for read in READS:
            for pattern in read.patterns:
                for sel in access.selections(pattern, workload, read, align=3):
                    got = reader.read(sel)
                    assert got.dtype == data.dtype
                    np.testing.assert_array_equal(got, data[sel])
    finally:
        reader.close()


@pytest.mark.parametrize(
    "sel",
    [
        (),
        (3,),
        (-1, slice(4, 9)),
        (slice(2, 6), slice(None), slice(40, 48)),
        (slice(None, None, 2), 5),
        (slice(None), slice(None), slice(None, None, -3)),
        (7, 31, 47),
        (slice(3, 3),),
    ],
)
def test_any_basic_selection_equals_numpy_indexing(tmp_path, sel):
    p = params(transfer_size=100)
    path = tmp_path / "f.bin"
    data = write(path, p)
    reader = PosixBackend().open_reader(path, W, p)
    got = reader.read(sel)
    reader.close()
    assert got.shape == data[sel].shape
    np.testing.assert_array_equal(got, data[sel])


def test_reads_fetch_only_the_bytes_a_selection_needs(tmp_path, monkeypatch):
    p = params(transfer_size="4KiB")
    path = tmp_path / "f.bin"
    write(path, p)
    calls = []
    real = os.preadv

    def spy(fd, buffers, offset):
        calls.append(sum(len(b) for b in buffers))
        return real(fd, buffers, offset)

    monkeypatch.setattr("iotune.backends.posix.os.preadv", spy)
    reader = PosixBackend().open_reader(path, W, p)
    reader.read((slice(None), 3, 7))
    assert calls == [2] * 8  # one element per time step
    calls.clear()
    reader.read((2, slice(4, 8), slice(10, 20)))
    assert calls == [20] * 4  # one row of the window per call
    calls.clear()
    reader.read((slice(1, 6),))  # 15360 bytes in 4KiB transfers
    assert calls == [4096] * 3 + [15360 - 3 * 4096]
    reader.close()


def test_verification_and_a_truncated_file(tmp_path):
    p = params()
    path = tmp_path / "f.bin"
    write(path, p)
    assert PosixBackend().verify(path, p) == {
        "layout": "raw",
        "transfer_size": 2**20,
        "bytes": W.nbytes,
    }
    with pytest.raises(VerificationError, match="not a regular file"):
        PosixBackend().verify(tmp_path / "missing.bin", p)
    with path.open("r+b") as f:
        f.truncate(W.nbytes - 1)
    with pytest.raises(VerificationError, match="the workload needs"):
        PosixBackend().open_reader(path, W, p)


def test_writer_rejects_a_slab_of_another_shape_or_dtype(tmp_path):
    writer = PosixBackend().open_writer(tmp_path / "f.bin", W, params())
    with pytest.raises(ValueError, match="does not fit"):
        writer.write(0, np.zeros((2, 32, 47), "int16"))
    with pytest.raises(ValueError, match="does not fit"):
        writer.write(0, np.zeros((2, 32, 48), "float32"))
    writer.close()


def test_resolve_and_availability():
    assert PosixBackend.resolve({}, W) == ({"transfer_size": 2**20}, [])
    assert PosixBackend.resolve({"transfer_size": "4KiB"}, W)[0] == {"transfer_size": 4096}
    with pytest.raises(UsageError, match="at least 1 byte"):
        PosixBackend.resolve({"transfer_size": 0}, W)
    assert get_backend("posix") is PosixBackend
    ok, detail = PosixBackend.available()
    assert ok and "pwrite" in detail
    assert PosixBackend().paths(Path("/nonexistent")) == []
