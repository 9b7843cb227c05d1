import os
from pathlib import Path

import numpy as np
import pytest

from iotune.backends import get_backend
from iotune.backends.posix.backend import PosixBackend
from iotune.core.errors import UsageError, VerificationError
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

    monkeypatch.setattr("iotune.backends.posix.backend.os.preadv", spy)
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
        "preallocate": "off",
        "fadvise": "none",
        "sync": "fsync",
        "bytes": W.nbytes,
        "allocated_bytes": path.stat().st_blocks * 512,
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


# --- preallocate: the file's blocks reserved before the first write --------------------


@pytest.mark.parametrize(("setting", "reserved"), [("on", True), ("off", False)])
def test_preallocate_reserves_the_blocks_before_the_first_write(tmp_path, setting, reserved):
    p = params(preallocate=setting)
    writer = PosixBackend().open_writer(tmp_path / "a.bin", W, p)
    try:
        before = (tmp_path / "a.bin").stat()  # nothing written yet
        assert (before.st_blocks * 512 >= W.nbytes) is reserved
        assert before.st_size == (W.nbytes if reserved else 0)
        writer.write(0, Field(W).slab(0, W.shape[0]))
    finally:
        writer.close()
    stored = PosixBackend().verify(tmp_path / "a.bin", p)
    assert stored["preallocate"] == setting and stored["allocated_bytes"] >= W.nbytes
    assert stored["bytes"] == W.nbytes


def test_preallocate_is_a_posix_knob_from_the_spec_to_the_results(tmp_path):
    from iotune.app.api import run
    from iotune.specfile.parse import load_spec_text

    text = (
        "version: 1\nname: prealloc\nworkload: {{shape: {{time: 8, y: 32, x: 48}}}}\n"
        "backend: {backend}\nparameters: {{preallocate: [false, true]}}\n"
        "read: {{patterns: [full]}}\nmeasure: {{repeats: 1}}\n"
    )
    assert PosixBackend.resolve({}, W)[0] == {"transfer_size": 2**20}  # the old id holds
    with pytest.raises(UsageError, match="preallocate"):
        load_spec_text(text.format(backend="zarr"))  # not a parameter of zarr
    (tmp_path / "s.yaml").write_text(text.format(backend="posix"))
    ds = run(tmp_path / "s.yaml", out=tmp_path / "out", progress=False)
    assert list(ds["preallocate"].values) == ["off", "on"]
    assert ds["preallocate"].attrs["long_name"] == "space allocated before the writes"
    assert (ds["status"] == "ok").all()


# --- direct: O_DIRECT reads return the same values, aligned or not --------------------


def test_direct_reads_every_pattern_exactly(tmp_path):
    # 64 x 64 float32: a step is 16 KiB, so O_DIRECT applies; spatial rows are short runs
    workload = Workload(("time", "y", "x"), (8, 64, 64), "float32")
    plain = PosixBackend.resolve({"transfer_size": 8192}, workload)[0]
    direct = PosixBackend.resolve({"transfer_size": 8192, "direct": "on"}, workload)[0]
    path = tmp_path / "d.bin"
    backend = PosixBackend()
    writer = backend.open_writer(path, workload, direct)
    for start, slab in Field(workload).slabs(2):
        writer.write(start, slab)
    writer.close()
    assert backend.verify(path, direct)["direct"] == "on"  # the kernel took O_DIRECT
    selections = [(slice(None),), (slice(1, 3), slice(5, 9), slice(7, 30)), (slice(None), 3, 5)]
    got, want = (PosixBackend().open_reader(path, workload, p) for p in (direct, plain))
    for selection in selections:
        assert np.array_equal(got.read(selection), want.read(selection)), selection
    got.close()
    want.close()
