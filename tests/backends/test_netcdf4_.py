import numpy as np
import pytest
import xarray as xr

from iotune.backends import backend_names, get_backend
from iotune.backends.netcdf4.backend import NetCDF4Backend
from iotune.core.errors import NotApplicable, UsageError, VerificationError
from iotune.measuring.data import Field
from iotune.model.spec import Workload

W = Workload(("time", "y", "x"), (8, 32, 48))


def params(**kw):
    effective, _notes = NetCDF4Backend.resolve(kw, W)
    return effective


def write(path, p, workload=W):
    backend = NetCDF4Backend()
    writer = backend.open_writer(path, workload, p)
    data = Field(workload).slab(0, workload.shape[0])
    writer.write(0, data[:5])
    writer.write(5, data[5:])
    writer.close()
    return data


CASES = [
    dict(chunks="contiguous"),
    dict(chunks=(4, 16, 16), codec="zlib", level=1),
    dict(chunks=(4, 16, 16), codec="zlib", level=9, shuffle="none"),
    dict(chunks=(8, 32, 48), codec="bzip2"),
    dict(chunks=(1, 32, 48), codec="zstd", level=9),
    dict(chunks=(2, 8, 8), codec="blosc-lz4", shuffle="bit"),
    dict(chunks=(2, 8, 8), codec="blosc-zstd", shuffle="none"),
    dict(chunks="auto", codec="zlib"),
]


@pytest.mark.parametrize("given", CASES, ids=lambda c: "-".join(map(str, c.values())))
def test_round_trip_and_verification(tmp_path, given):
    p = params(**given)
    path = tmp_path / "f.nc"
    data = write(path, p)
    stored = NetCDF4Backend().verify(path, p)
    if p["chunks"] != "auto":
        assert stored["layout"] == p["chunks"]
    reader = NetCDF4Backend().open_reader(path, W, p)
    np.testing.assert_array_equal(reader.read((slice(None),)), data)
    np.testing.assert_array_equal(reader.read((slice(None), 3, 7)), data[:, 3, 7])
    reader.close()
    with xr.open_dataset(path, engine="netcdf4") as ds:
        np.testing.assert_array_equal(ds["data"].values, data)


def test_verification_catches_a_file_that_differs_from_the_request(tmp_path):
    path = tmp_path / "f.nc"
    write(path, params(chunks=(4, 16, 16), codec="zlib", level=4))
    with pytest.raises(VerificationError, match="complevel"):
        NetCDF4Backend().verify(path, params(chunks=(4, 16, 16), codec="zlib", level=6))
    with pytest.raises(VerificationError, match="chunking is 4x16x16"):
        NetCDF4Backend().verify(path, params(chunks=(8, 16, 16), codec="zlib", level=4))
    with pytest.raises(VerificationError, match="bzip2"):
        NetCDF4Backend().verify(path, params(chunks=(4, 16, 16), codec="bzip2", level=4))


def test_chunk_cache_is_applied_when_reading(tmp_path):
    p = params(chunks=(4, 16, 16), codec="zlib", chunk_cache=3 * 2**20)
    path = tmp_path / "f.nc"
    write(path, p)
    reader = NetCDF4Backend().open_reader(path, W, p)
    assert reader._var.get_var_chunk_cache()[0] == 3 * 2**20
    reader.close()


def test_resolve_fills_library_defaults_and_explains_what_does_not_apply():
    p, notes = NetCDF4Backend.resolve({"codec": "zlib"}, W)
    assert p == {
        "chunks": "auto",
        "codec": "zlib",
        "level": 4,
        "shuffle": "byte",
        "chunk_cache": None,
    }
    p, notes = NetCDF4Backend.resolve({"chunks": "contiguous", "chunk_cache": 2**20}, W)
    assert p["chunk_cache"] is None
    assert notes == ["chunk_cache does not apply to contiguous storage"]


@pytest.mark.parametrize(
    "given, reason",
    [
        (dict(chunks="contiguous", codec="zlib"), "chunked storage"),
        (dict(codec="bzip2", shuffle="byte"), "shuffle filter only with zlib"),
        (dict(codec="zlib", shuffle="bit"), "bit shuffle"),
        (dict(codec="zlib", level=12), "out of range"),
    ],
)
def test_combinations_netcdf4_cannot_express(given, reason):
    with pytest.raises(NotApplicable, match=reason):
        NetCDF4Backend.resolve(given, W)


def test_registry_lists_and_names_choices():
    assert "netcdf4" in backend_names()
    assert get_backend("netcdf4") is NetCDF4Backend
    with pytest.raises(UsageError, match="allowed: netcdf4"):
        get_backend("hdf4")
    ok, detail = NetCDF4Backend.available()
    assert ok and "HDF5" in detail
