"""Each baseline's layout against the library (or the published algorithm) that defines it.

iotune computes every baseline by calling the library; these tests ask the
library again the way its users do (a real file, a real dataset, a real array)
and compare.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from iotune.core.errors import NotApplicable
from iotune.model.codecs import Codec
from iotune.model.spec import Workload
from iotune.runner.chunk_rules import CLOUD_HIGH, CLOUD_LOW, balanced_chunks, cloud_chunks
from iotune.runner.layouts import layout

CUBE = Workload(("time", "y", "x"), (48, 300, 200), "float32")
NONE, ZLIB = Codec("none"), Codec("zlib", 4)


def test_library_netcdf_is_what_netcdf_c_writes(tmp_path: Path) -> None:
    netCDF4 = pytest.importorskip("netCDF4")
    data = np.zeros(CUBE.shape, CUBE.dtype)
    found = {}
    for codec, kwargs in ((NONE, {}), (ZLIB, {"zlib": True, "complevel": 4})):
        path = tmp_path / f"{codec.name}.nc"
        with netCDF4.Dataset(path, "w") as ds:  # as a user writes it: no chunksizes
            for dim, size in zip(CUBE.dims, CUBE.shape, strict=True):
                ds.createDimension(dim, size)
            ds.createVariable("v", CUBE.dtype, CUBE.dims, **kwargs)[:] = data
        with netCDF4.Dataset(path) as ds:
            chunking = ds["v"].chunking()
        found[codec.name] = chunking if chunking == "contiguous" else tuple(chunking)
        assert layout("library", "netcdf4", CUBE, codec)[0] == found[codec.name]
    assert found["none"] == "contiguous"  # netCDF-C's default without a filter
    assert layout("library", "netcdf4-object", CUBE, ZLIB)[0] == found["zlib"]


def test_library_h5py_is_h5pys_guess(tmp_path: Path) -> None:
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "a.h5", "w") as f:
        guess = f.create_dataset("v", shape=CUBE.shape, dtype=CUBE.dtype, chunks=True).chunks
    assert layout("library", "h5py", CUBE, NONE) == (guess, {})
    assert layout("library", "hdf5-object", CUBE, ZLIB) == (guess, {})


def test_library_zarr_is_zarrs_guess(tmp_path: Path) -> None:
    zarr = pytest.importorskip("zarr")
    array = zarr.create_array(store=str(tmp_path / "a.zarr"), shape=CUBE.shape, dtype=CUBE.dtype)
    assert layout("library", "zarr", CUBE, NONE) == (array.chunks, {})
    assert layout("library", "zarr-object", CUBE, NONE) == (array.chunks, {})


@pytest.mark.parametrize("backend", ["posix", "mpiio", "memory"])
def test_library_needs_a_format_library(backend: str) -> None:
    with pytest.raises(NotApplicable, match=backend):
        layout("library", backend, CUBE, NONE)


@pytest.mark.parametrize("shape", [(48, 300, 200), (2000, 721, 1440), (3, 5, 7)])
def test_dask_auto_is_dasks(shape: tuple[int, ...]) -> None:
    da = pytest.importorskip("dask.array")
    work = Workload(("time", "y", "x"), shape, "int16")
    assert layout("dask-auto", "zarr", work, NONE)[0] == da.zeros(shape, dtype="int16").chunksize


def _rew(shape: list[int], val_size: int, chunk_size: int) -> list[int]:
    """Rew's chunk_shape_3D (Unidata 2013) transcribed independently, as the oracle."""
    values = chunk_size / float(val_size)
    axis = (shape[0] * shape[1] * shape[2] / values) ** 0.25
    if shape[0] / axis**2 < 1.0:
        first, axis = 1.0, axis / math.sqrt(shape[0] / axis**2)
    else:
        first = shape[0] // axis**2
    prod = math.prod(axis / n for n in shape[1:] if n / axis < 1.0)
    floor = [first] + [1.0 if n / axis < 1.0 else (prod * n) // axis for n in shape[1:]]
    best, best_size = floor, 0
    for bits in itertools.product((0, 1), repeat=3):
        cand = [c + b for c, b in zip(floor, bits, strict=True)]
        size = val_size * math.prod(cand)
        if best_size < size <= chunk_size:
            best, best_size = cand, size
    return [int(c) for c in best]


@pytest.mark.parametrize(
    ("shape", "val_size", "chunk_size"),
    [
        ((98128, 277, 349), 4, 4096),  # the example of Rew's blog post
        ((98128, 277, 349), 4, 2**20),
        ((64, 256, 256), 2, 2**20),
        ((1000, 10, 20000), 8, 2**22),
        ((4, 3000, 3000), 4, 2**20),
    ],
)
def test_balanced_is_rews_chunk_shape_3d(shape, val_size, chunk_size) -> None:
    rew = _rew(list(shape), val_size, chunk_size)
    expected = [min(c, n) for c, n in zip(rew, shape, strict=True)]
    assert list(balanced_chunks(shape, val_size, chunk_bytes=chunk_size)) == expected
    assert math.prod(expected) * val_size <= chunk_size


def test_balanced_is_for_three_dimensions() -> None:
    with pytest.raises(NotApplicable, match="3-D"):
        layout("balanced", "zarr", Workload(("y", "x"), (100, 100)), NONE)


def test_balanced_baseline_uses_one_mib() -> None:
    chunks = layout("balanced", "netcdf4", CUBE, NONE)[0]
    assert chunks == balanced_chunks(CUBE.shape, 4, chunk_bytes=2**20)


@pytest.mark.parametrize("shape", [(365, 720, 1440), (2000, 100, 100), (48, 300, 200)])
def test_cloud_is_the_largest_proportional_chunk_up_to_4mib(shape) -> None:
    chunks = cloud_chunks(shape, 4)
    nbytes = 4 * math.prod(chunks)
    assert CLOUD_LOW <= nbytes <= CLOUD_HIGH
    scale = [c / n for c, n in zip(chunks, shape, strict=True)]
    assert max(scale) - min(scale) < 0.05  # the array's proportions
    bigger = tuple(min(n, c + 1) for c, n in zip(chunks, shape, strict=True))
    assert 4 * math.prod(bigger) > CLOUD_HIGH  # one more along each dimension is too big


def test_cloud_keeps_a_small_array_whole() -> None:
    assert cloud_chunks((16, 64, 64), 2) == (16, 64, 64)


def test_source_netcdf_is_the_files_layout(tmp_path: Path) -> None:
    xr = pytest.importorskip("xarray")
    path = tmp_path / "src.nc"
    data = xr.Dataset({"t2m": (("time", "y", "x"), np.ones((20, 30, 40), "float32"))})
    encoding = {"t2m": {"zlib": True, "complevel": 3, "shuffle": True, "chunksizes": (5, 30, 8)}}
    data.to_netcdf(path, engine="netcdf4", encoding=encoding)
    work = Workload(("time", "y", "x"), (20, 30, 40), "float32", "file", 0, str(path), "t2m")
    chunks, codec = layout("source", "netcdf4", work, NONE)
    assert chunks == (5, 30, 8)
    assert codec == {"codec": "zlib", "level": 3, "shuffle": "byte"}


def test_source_of_a_glob_is_its_first_files_layout(tmp_path: Path) -> None:
    xr = pytest.importorskip("xarray")
    for i, chunk in enumerate((4, 2)):  # the first file (by name) decides
        data = xr.Dataset(
            {"t2m": (("time", "x"), np.ones((4, 8), "float32"))},
            coords={"time": np.arange(4 * i, 4 * i + 4)},
        )
        encoding = {"t2m": {"zlib": True, "complevel": 1, "chunksizes": (chunk, 8)}}
        data.to_netcdf(tmp_path / f"part{i}.nc", engine="netcdf4", encoding=encoding)
    glob = str(tmp_path / "part*.nc")
    work = Workload(("time", "x"), (8, 8), "float32", "file", 0, glob, "t2m")
    chunks, codec = layout("source", "netcdf4", work, NONE)
    assert chunks == (4, 8) and codec["codec"] == "zlib"


def test_source_zarr_is_the_stores_layout(tmp_path: Path) -> None:
    zarr = pytest.importorskip("zarr")
    path = tmp_path / "src.zarr"
    group = zarr.open_group(str(path), mode="w")
    codec = zarr.codecs.ZstdCodec(level=5)
    group.create_array(
        "t2m", shape=(20, 30, 40), chunks=(4, 15, 40), dtype="int16", compressors=[codec]
    )
    work = Workload(("time", "y", "x"), (10, 30, 40), "int16", "file", 0, str(path), "t2m")
    chunks, found = layout("source", "zarr", work, NONE)
    assert chunks == (4, 15, 40)
    assert found == {"codec": "zstd", "level": 5, "shuffle": "none"}


def test_source_needs_a_file() -> None:
    with pytest.raises(NotApplicable, match="field: file"):
        layout("source", "netcdf4", CUBE, NONE)


def test_a_source_baseline_is_a_trial_with_the_files_chunks_and_codec(tmp_path: Path) -> None:
    xr = pytest.importorskip("xarray")
    from iotune.runner.plan import make_plan
    from iotune.specfile.parse import load_spec_text

    data = xr.Dataset({"t2m": (("time", "y", "x"), np.ones((12, 16, 16), "float32"))})
    encoding = {"t2m": {"zlib": True, "complevel": 2, "chunksizes": (3, 16, 4)}}
    data.to_netcdf(tmp_path / "src.nc", engine="netcdf4", encoding=encoding)
    text = f"""
version: 1
workload: {{field: file, path: {tmp_path / "src.nc"}, variable: t2m}}
backend: [netcdf4, zarr]
parameters: {{chunks: [[12, 4, 4]], codec: none}}
baselines: [source, library]
"""
    plan = make_plan(load_spec_text(text))
    found = {b.label: b for b in plan.baselines}
    assert list(found) == ["source:netcdf4", "library:netcdf4", "source:zarr", "library:zarr"]
    trials = {t.id: t for t in plan.trials}
    for label in ("source:netcdf4", "source:zarr"):
        params = trials[found[label].trial_id].params
        assert (params["chunks"], params["codec"], params["level"]) == ("3x16x4", "zlib", 2)
    assert found["library:netcdf4"].effective["chunks"] == "contiguous"  # codec none
