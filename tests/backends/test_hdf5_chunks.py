"""HDF5's stored chunk bytes made outside the library: equal to what netCDF-C and h5py store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iotune.backends.hdf5_chunks import ChunkCodec, chunk_codec

CHUNKS = (8, 16, 16)
#: (netCDF4 createVariable keywords, h5py create_dataset keywords)
SETTINGS = {
    "zlib+shuffle": (
        {"zlib": True, "complevel": 4, "shuffle": True},
        {"compression": "gzip", "compression_opts": 4, "shuffle": True},
    ),
    "zlib": ({"zlib": True, "complevel": 1}, {"compression": "gzip", "compression_opts": 1}),
    "none": ({}, {}),
}


def values(shape: tuple[int, ...]) -> np.ndarray:
    """A smooth float32 field, and random bits in the first chunk (deflate cannot shrink them)."""
    rng = np.random.default_rng(0)
    field = np.cumsum(rng.normal(size=shape), axis=0).astype("f4")
    field[:8, :16, :16] = rng.integers(0, 2**32, (8, 16, 16), dtype=np.uint32).view("f4")
    return field


def written_by_library(path: Path, library: str, keywords: dict, data: np.ndarray) -> None:
    if library == "netcdf4":
        import netCDF4

        with netCDF4.Dataset(path, "w") as nc:
            for dim, n in zip("tyx", data.shape, strict=True):
                nc.createDimension(dim, n)
            var = nc.createVariable("v", "f4", ("t", "y", "x"), chunksizes=CHUNKS, **keywords)
            var[:] = data
    else:
        import h5py

        with h5py.File(path, "w") as fh:
            fh.create_dataset("v", data=data, chunks=CHUNKS, fillvalue=-1.5, **keywords)


@pytest.mark.parametrize("library", ["netcdf4", "h5py"])
@pytest.mark.parametrize("setting", list(SETTINGS))
def test_every_chunk_is_stored_as_the_library_stores_it(
    tmp_path: Path, library: str, setting: str
) -> None:
    import h5py

    data = values((20, 40, 40))  # edge chunks along every dimension
    path = tmp_path / "lib.h5"
    written_by_library(path, library, SETTINGS[setting][library == "h5py"], data)
    with h5py.File(path, "r") as fh:
        dset = fh["v"]
        codec = chunk_codec(dset)
        assert isinstance(codec, ChunkCodec)
        index = (slice(None),) * 3
        for offset in codec.offsets(index):  # the first: random bits deflate cannot shrink
            stored = dset.id.read_direct_chunk(offset)
            assert codec.encode(codec.chunk_of(data, index, offset)) == stored, offset


def test_filters_it_does_not_reproduce_are_named(tmp_path: Path) -> None:
    import h5py
    import hdf5plugin

    with h5py.File(tmp_path / "f.h5", "w") as fh:
        fh.create_dataset("z", (4, 4), "f4", chunks=(2, 2), **hdf5plugin.Zstd(3))
        fh.create_dataset("c", (4, 4), "f4")
        fh.create_dataset("s", (4,), h5py.string_dtype(), chunks=(2,))
        assert "HDF5 filter 32015" in str(chunk_codec(fh["z"]))
        assert chunk_codec(fh["c"]) == "contiguous storage has no chunks"
        assert "not a plain number" in str(chunk_codec(fh["s"]))


def test_only_whole_chunks_are_aligned() -> None:
    codec = ChunkCodec((8, 16), (20, 40), np.dtype("f4"), 0.0, False, None)
    assert codec.aligned((slice(8, 20), slice(0, 40)))  # ends where the dataset ends
    assert not codec.aligned((slice(4, 16), slice(0, 40)))
    assert not codec.aligned((slice(0, 8), slice(0, 24)))
    assert list(codec.offsets((slice(8, 20), slice(16, 40)))) == [
        (8, 16),
        (8, 32),
        (16, 16),
        (16, 32),
    ]
