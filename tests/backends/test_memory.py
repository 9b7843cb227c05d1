"""The memory backend: codecs alone, in memory, with no file system in the way.

What a user screening codecs relies on: the stored size is what the configured
codec makes of each chunk (checked against zlib/bz2 called here directly), values
come back exactly, reads are labelled "memory" with nothing resident or evicted,
and the timings are the codec's work (a higher zlib level costs more CPU).
"""

import bz2
import statistics
import zlib

import numpy as np
import pytest
import yaml

from iotune.app import api
from iotune.backends.memory.backend import MemoryBackend
from iotune.measuring import measure
from iotune.measuring.access import selections
from iotune.measuring.data import Field
from iotune.model.records import TrialTask
from iotune.model.spec import MeasureSpec, ReadSpec, Workload
from iotune.runner.plan import make_plan
from iotune.runner.trial import run_trial
from iotune.specfile.parse import load_spec_text

W = Workload(("time", "y", "x"), (10, 48, 40))
#: 512 KiB of int16: enough for codec timings to stand well above the clock's noise
SMOOTH = Workload(("time", "y", "x"), (16, 128, 128))
CHUNKS = (4, 64, 64)


def write(path, params, slab=3, workload=W):
    backend = MemoryBackend()
    backend.import_library()
    writer = backend.open_writer(path, workload, params)
    data = Field(workload).slab(0, workload.shape[0])
    for start in range(0, workload.shape[0], slab):
        writer.write(start, data[start : start + slab])
    writer.close()
    return backend, data


def expected_stored(data, chunks, codec, level, shuffle):
    """Bytes ``codec`` makes of every chunk, computed with zlib/bz2 directly."""
    compress = {
        "none": lambda b: b,
        "zlib": lambda b: zlib.compress(b, level),
        "bzip2": lambda b: bz2.compress(b, level),
    }[codec]
    total = 0
    for t in range(0, data.shape[0], chunks[0]):
        for y in range(0, data.shape[1], chunks[1]):
            for x in range(0, data.shape[2], chunks[2]):
                block = data[t : t + chunks[0], y : y + chunks[1], x : x + chunks[2]]
                raw = np.ascontiguousarray(block).tobytes()
                if shuffle == "byte":  # HDF5's shuffle: all first bytes, then all second ...
                    raw = np.frombuffer(raw, np.uint8).reshape(-1, data.itemsize).T.tobytes()
                total += len(compress(raw))
    return total


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


@pytest.mark.parametrize(
    "codec, level, shuffle",
    [
        ("none", None, None),
        ("zlib", 1, "byte"),
        ("zlib", 9, "byte"),
        ("zlib", 4, "none"),
        ("bzip2", 9, "none"),
        ("bzip2", 1, "byte"),
    ],
)
@pytest.mark.parametrize("chunks", [CHUNKS, "contiguous"])
def test_stored_bytes_are_what_the_codec_makes_of_each_chunk(
    tmp_path, codec, level, shuffle, chunks
):
    given = {"codec": codec, "level": level, "shuffle": shuffle, "chunks": chunks}
    params, _ = MemoryBackend.resolve(given, SMOOTH)
    backend, data = write(tmp_path / "m", params, slab=5, workload=SMOOTH)
    layout = SMOOTH.shape if chunks == "contiguous" else chunks
    expected = expected_stored(data, layout, codec, level, shuffle or "none")
    assert backend.stored_bytes(tmp_path / "m") == expected
    if codec != "none":
        assert data.nbytes / expected > 1.3  # smooth fields really compress


@pytest.mark.parametrize("dtype", ["int16", "float32"])
@pytest.mark.parametrize("codec", ["zlib", "bzip2", "zstd", "blosc-lz4", "blosc-zstd"])
def test_the_ratio_follows_the_data(tmp_path, codec, dtype):
    """Smooth fields compress, random bits barely, zeros enormously; none never."""
    ratios = {}
    for field in ("smooth", "random", "zeros"):
        workload = Workload(SMOOTH.dims, SMOOTH.shape, dtype=dtype, field=field)
        for name in (codec, "none"):
            params, _ = MemoryBackend.resolve({"codec": name, "chunks": CHUNKS}, workload)
            backend, data = write(tmp_path / f"{field}-{name}", params, workload=workload)
            ratios[field, name] = data.nbytes / backend.stored_bytes(tmp_path / f"{field}-{name}")
    assert {ratios[f, "none"] for f in ("smooth", "random", "zeros")} == {1.0}
    assert ratios["smooth", codec] > 1.2
    assert ratios["zeros", codec] > 50
    if dtype == "int16":  # uniform over all 16 bits: nothing to gain
        assert 0.97 < ratios["random", codec] < 1.01
    else:  # normal floats: only the exponent bytes are redundant
        assert 0.97 < ratios["random", codec] < 1.25
    assert ratios["smooth", codec] > ratios["random", codec]


def test_nothing_reaches_the_file_system(tmp_path):
    params, _ = MemoryBackend.resolve({"codec": "zlib", "chunks": CHUNKS}, SMOOTH)
    backend, data = write(tmp_path / "m", params, workload=SMOOTH)
    assert list(tmp_path.iterdir()) == []
    assert backend.paths(tmp_path / "m") == []
    assert backend.stored_bytes(tmp_path / "m") > 0  # yet the chunks are kept
    reader = backend.open_reader(tmp_path / "m", SMOOTH, params)
    np.testing.assert_array_equal(reader.read((slice(None),) * 3), data)
    reader.close()
    assert list(tmp_path.iterdir()) == []


def memory_task(tmp_path, *, codec="zlib", level=None, cache="cold", repeats=1, patterns=None):
    text = yaml.safe_dump(
        {
            "version": 1,
            "workload": {"shape": dict(zip(SMOOTH.dims, SMOOTH.shape, strict=True))},
            "backend": "memory",
            "parameters": {"chunks": list(CHUNKS), "codec": codec}
            | ({} if level is None else {"level": level}),
            "read": {"patterns": patterns or ["full"], "timeseries": {"pixels": 4}},
        }
    )
    sweep = load_spec_text(text)
    (trial,) = make_plan(sweep).trials
    return TrialTask(
        trial, sweep.workload, sweep.read, MeasureSpec(repeats=repeats, cache=cache), str(tmp_path)
    )


@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_reads_are_from_memory_with_no_page_cache_involved(tmp_path, monkeypatch, cache):
    def untouchable(*_args, **_kw):
        raise AssertionError("the page cache of an in-memory store was consulted")

    for name in ("evict", "resident_fraction", "resident_pages"):
        monkeypatch.setattr(measure, name, untouchable)
    t = memory_task(tmp_path, cache=cache, repeats=2, patterns=["full", "timeseries"])
    result = run_trial(t)
    assert result.status == "ok", result.error
    for pattern, runs in result.reads.items():
        assert [r["cache"] for r in runs] == ["memory", "memory"], pattern
        assert [r["resident_fraction"] for r in runs] == [0.0, 0.0], pattern
    assert [r["bytes"] for r in result.reads["full"]] == [SMOOTH.nbytes] * 2
    assert result.file_bytes == expected_stored(
        Field(SMOOTH).slab(0, 16), CHUNKS, "zlib", 4, "byte"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_timings_are_the_codecs_work(tmp_path):
    """CPU seconds are process time: what the codec costs, independent of host load."""
    cpu = {}
    for codec, level in (("none", None), ("zlib", 1), ("zlib", 9), ("bzip2", 9)):
        result = run_trial(memory_task(tmp_path, codec=codec, level=level, repeats=5))
        assert result.status == "ok", result.error
        for w in result.write:
            assert w["cpu_s"] > 0 and w["s"] > 0
            assert w["MiBps"] == pytest.approx(SMOOTH.nbytes / 2**20 / w["s"])
        cpu[codec, level, "write"] = statistics.median(w["cpu_s"] for w in result.write)
        cpu[codec, level, "read"] = statistics.median(r["cpu_s"] for r in result.reads["full"])
    # measured about 6x apart here; 1.5x leaves room for a loaded CI machine
    assert cpu["zlib", 9, "write"] > 1.5 * cpu["zlib", 1, "write"]
    assert cpu["zlib", 1, "write"] > 1.5 * cpu["none", None, "write"]
    assert cpu["bzip2", 9, "read"] > 1.5 * cpu["none", None, "read"]


def test_a_memory_sweep_reports_ratio_timings_and_memory_reads(tmp_path):
    spec = tmp_path / "memory.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "name": "codecs",
                "workload": {"shape": {"time": 16, "y": 128, "x": 128}, "dtype": "int16"},
                "backend": "memory",
                "parameters": {"chunks": list(CHUNKS), "codec": ["none", "zlib"], "level": [1, 9]},
                "read": {"patterns": ["full", "timeseries"], "timeseries": {"pixels": 4}},
                "measure": {"repeats": 2},
            }
        )
    )
    ds = api.run(spec, out=tmp_path / "out", progress=False)
    raw = SMOOTH.nbytes
    data = Field(SMOOTH).slab(0, 16)
    assert ds.attrs["raw_bytes"] == raw
    status = ds["status"].to_series().to_dict()
    assert status == {
        ("none", 1): "ok",
        ("none", 9): "not_applicable",  # the level does not apply: measured once, at 1
        ("zlib", 1): "ok",
        ("zlib", 9): "ok",
    }
    measured = [("none", 1), ("zlib", 1), ("zlib", 9)]
    expected = {
        ("none", 1): raw,
        ("zlib", 1): expected_stored(data, CHUNKS, "zlib", 1, "byte"),
        ("zlib", 9): expected_stored(data, CHUNKS, "zlib", 9, "byte"),
    }
    for codec, level in measured:
        point = ds.sel(codec=codec, level=level)
        assert point["file_bytes"].item() == expected[codec, level]
        assert point["ratio"].item() == pytest.approx(raw / expected[codec, level], rel=1e-12)
        assert set(point["read_cache"].values.ravel()) == {"memory"}
        assert set(point["resident_fraction"].values.ravel()) == {0.0}
        assert point["read_bytes"].sel(pattern="full").item() == raw
        assert point["read_bytes"].sel(pattern="timeseries").item() == 4 * 16 * 2
    assert ds["ratio"].sel(codec="none", level=1).item() == 1.0
    assert ds["ratio"].sel(codec="zlib", level=1).item() > 1.3
    assert ds["ratio"].sel(codec="zlib", level=1) < ds["ratio"].sel(codec="zlib", level=9)
    write_cpu = ds["write_cpu_s"].median("repeat")
    assert write_cpu.sel(codec="zlib", level=9) > 2 * write_cpu.sel(codec="zlib", level=1)
    assert write_cpu.sel(codec="zlib", level=1) > 2 * write_cpu.sel(codec="none", level=1)
