import warnings

import numpy as np
import pytest
import xarray as xr

from iotune.backends import get_backend
from iotune.backends.zarr.backend import ZarrBackend
from iotune.core.errors import NotApplicable, VerificationError
from iotune.measuring import access
from iotune.measuring.data import Field
from iotune.model.spec import ReadSpec, Workload

W = Workload(("time", "y", "x"), (8, 32, 48))
READ = ReadSpec(patterns=("full", "spatial", "timeseries"), timeseries_pixels=5)


def params(**kw):
    effective, _notes = ZarrBackend.resolve(kw, W)
    return effective


def write(path, p, workload=W):
    backend = ZarrBackend()
    writer = backend.open_writer(path, workload, p)
    data = Field(workload).slab(0, workload.shape[0])
    writer.write(0, data[:5])
    writer.write(5, data[5:])
    writer.close()
    return data


def read_all(path, p, workload=W):
    """Every selection the read patterns make, paired with what it returned."""
    reader = ZarrBackend().open_reader(path, workload, p)
    try:
        return [
            (sel, reader.read(sel))
            for pattern in READ.patterns
            for sel in access.selections(pattern, workload, READ)
        ]
    finally:
        reader.close()


CASES = [
    dict(chunks="contiguous"),
    dict(chunks=(4, 16, 16), codec="zlib", shuffle="byte"),
    dict(chunks=(4, 16, 16), codec="zlib", level=9, shuffle="none"),
    dict(chunks=(8, 32, 48), codec="bzip2"),
    dict(chunks=(1, 32, 48), codec="zstd", level=9),
    dict(chunks=(2, 8, 8), codec="blosc-lz4", shuffle="byte"),
    dict(chunks=(2, 8, 8), codec="blosc-lz4", shuffle="bit"),
    dict(chunks=(2, 8, 16), shards=(8, 32, 48), codec="zstd"),
    dict(chunks=(2, 8, 16), shards=(4, 16, 48), codec="blosc-zstd", shuffle="bit"),
    dict(chunks=(3, 10, 10), shards=(6, 20, 20), codec="zlib"),
    dict(chunks="auto", codec="zlib"),
]


@pytest.mark.parametrize("given", CASES, ids=lambda c: "-".join(map(str, c.values())))
def test_round_trip_and_verification(tmp_path, given):
    p = params(**given)
    path = tmp_path / "f.zarr"
    data = write(path, p)
    stored = ZarrBackend().verify(path, p)
    if p["chunks"] not in ("auto", "contiguous"):
        assert stored["layout"] == p["chunks"]
    assert stored["shards"] == p["shards"]
    assert bool(stored["compressors"]) == (p["codec"] != "none")
    for sel, got in read_all(path, p):
        np.testing.assert_array_equal(got, data[sel])
        assert got.dtype == data.dtype


def test_contiguous_is_one_chunk_of_the_whole_array(tmp_path):
    p = params(chunks="contiguous", codec="zstd")
    path = tmp_path / "f.zarr"
    write(path, p)
    assert ZarrBackend().verify(path, p)["layout"] == "8x32x48"
    assert len(ZarrBackend().paths(path)) == 3  # group and array metadata, one chunk


def test_every_chunk_is_stored_even_when_it_holds_only_the_fill_value(tmp_path):
    zeros = Workload(("time", "y", "x"), (4, 16, 16), field="zeros")
    p = ZarrBackend.resolve({"chunks": (2, 8, 8)}, zeros)[0]
    path = tmp_path / "f.zarr"
    write(path, p, zeros)
    chunk_files = [f for f in ZarrBackend().paths(path) if f.name != "zarr.json"]
    assert len(chunk_files) == 8


def test_verification_catches_a_store_that_differs_from_the_request(tmp_path):
    path = tmp_path / "f.zarr"
    write(path, params(chunks=(4, 16, 16), codec="zlib", level=4))
    with pytest.raises(VerificationError, match="compressors"):
        ZarrBackend().verify(path, params(chunks=(4, 16, 16), codec="zstd", level=4))
    with pytest.raises(VerificationError, match="compressors"):
        ZarrBackend().verify(path, params(chunks=(4, 16, 16), codec="zlib", level=6))
    with pytest.raises(VerificationError, match="chunking is 4x16x16"):
        ZarrBackend().verify(path, params(chunks=(8, 16, 16), codec="zlib", level=4))
    with pytest.raises(VerificationError, match="shards are none"):
        ZarrBackend().verify(
            path, params(chunks=(4, 16, 16), shards=(8, 32, 48), codec="zlib", level=4)
        )


def test_the_store_opens_in_xarray_with_the_workload_dimensions(tmp_path):
    p = params(chunks=(2, 8, 16), shards=(4, 16, 48), codec="zlib")
    path = tmp_path / "f.zarr"
    data = write(path, p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numcodecs codecs are outside the Zarr 3 spec
        ds = xr.open_zarr(path, consolidated=False)
        assert ds["data"].dims == W.dims
        np.testing.assert_array_equal(ds["data"].values, data)


def test_resolve_fills_defaults_and_explains_what_does_not_apply():
    p, notes = ZarrBackend.resolve({"codec": "zlib"}, W)
    assert p == {
        "chunks": "auto",
        "shards": "none",
        "codec": "zlib",
        "level": 4,
        "shuffle": "byte",
        "chunk_cache": None,
    }
    assert notes == []
    p, notes = ZarrBackend.resolve({"chunks": (4, 16, 16), "chunk_cache": 2**20}, W)
    assert p["chunk_cache"] is None
    assert notes == ["chunk_cache does not apply to zarr"]
    p, _ = ZarrBackend.resolve({"chunks": (2, 8, 16), "shards": (8, 32, 48)}, W)
    assert (p["chunks"], p["shards"]) == ("2x8x16", "8x32x48")


@pytest.mark.parametrize(
    "given, reason",
    [
        (dict(chunks=(2, 8, 16), shards=(8, 32, 40)), "8x32x40 is not a multiple of .* 2x8x16"),
        (dict(chunks=(3, 8, 16), shards=(8, 32, 48)), "not a multiple"),
        (dict(chunks="auto", shards=(8, 32, 48)), "explicit chunk shape"),
        (dict(shards=(8, 32, 48)), "explicit chunk shape"),
        (dict(chunks="contiguous", shards=(8, 32, 48)), "explicit chunk shape"),
        (dict(codec="zlib", shuffle="bit"), "bit shuffle"),
        (dict(codec="zstd", level=23), "out of range"),
    ],
)
def test_combinations_zarr_cannot_express(given, reason):
    with pytest.raises(NotApplicable, match=reason):
        ZarrBackend.resolve(given, W)


def test_registry_and_availability():
    assert get_backend("zarr") is ZarrBackend
    ok, version = ZarrBackend.available()
    assert ok and version.startswith("3.")
