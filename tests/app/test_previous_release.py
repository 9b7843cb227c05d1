"""Results files of the release before the format packages still open, recommend and apply.

``tests/fixtures/previous-release/zarr-shards.nc``, ``netcdf4-classic.nc`` and
``h5py-paged.nc`` were written by iotune before issue 40 from the specs beside them: a Zarr
pick with its shard index at the start and empty chunks not written, a netCDF4 pick in the
classic data model with fill off, and an h5py pick in a paged file. Their picks must
arrive in the converted data, as the current release's do.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PREVIOUS = Path(__file__).resolve().parents[1] / "fixtures" / "previous-release"


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A small netCDF file with the sweeps' workload dimensions, the top half zero."""
    import xarray as xr

    data = np.arange(16 * 32 * 32, dtype="float32").reshape(16, 32, 32)
    data[:8] = 0
    path = tmp_path / "source.nc"
    xr.Dataset({"data": (("time", "y", "x"), data)}).to_netcdf(path, engine="netcdf4")
    return path


@pytest.mark.parametrize("name", ["zarr-shards", "netcdf4-classic", "h5py-paged"])
def test_show_and_recommend_open_them(name: str, tmp_path: Path) -> None:
    results = PREVIOUS / f"{name}.nc"
    assert iotune("show", results, cwd=tmp_path).returncode == 0
    rec = iotune("recommend", results, "--format", "json", cwd=tmp_path)
    assert rec.returncode == 0, rec.stderr
    settings = json.loads(rec.stdout)["winner"]["settings"]
    if name == "zarr-shards":
        assert settings["shard_index"] == "start"
        assert settings["write_empty_chunks"] == "off"
    elif name == "netcdf4-classic":
        assert (settings["format"], settings["fill"]) == ("NETCDF4_CLASSIC", "off")
    else:
        assert settings["page_size"] == 2**20


def test_a_sharded_zarr_pick_is_applied_with_its_shard_index(source: Path, tmp_path: Path) -> None:
    import zarr

    target = tmp_path / "target.zarr"
    done = iotune(
        "apply", PREVIOUS / "zarr-shards.nc", source, "-o", target, "--no-measure", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    meta = json.loads((target / "data" / "zarr.json").read_text())
    sharding = meta["codecs"][0]
    assert sharding["name"] == "sharding_indexed"
    assert sharding["configuration"]["index_location"] == "start"
    assert list(sharding["configuration"]["chunk_shape"]) == [4, 16, 16]
    np.testing.assert_array_equal(zarr.open_array(target / "data")[:8], 0)


def test_a_classic_netcdf4_pick_is_applied_as_classic(source: Path, tmp_path: Path) -> None:
    import netCDF4

    target = tmp_path / "target.nc"
    done = iotune(
        "apply", PREVIOUS / "netcdf4-classic.nc", source, "-o", target, "--no-measure", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    with netCDF4.Dataset(target) as nc:
        assert nc.data_model == "NETCDF4_CLASSIC"
        var = nc.variables["data"]
        assert var.chunking() == [4, 16, 16]
        assert var.filters()["zlib"] and var.filters()["shuffle"]


def test_a_paged_h5py_pick_is_applied_with_its_pages(source: Path, tmp_path: Path) -> None:
    import h5py

    target = tmp_path / "target.h5"
    done = iotune(
        "apply", PREVIOUS / "h5py-paged.nc", source, "-o", target, "--no-measure", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "  HDF5 file: page_size 1MiB" in done.stdout.splitlines()  # iotune's words
    with h5py.File(target, "r") as fh:
        plist = fh.id.get_create_plist()
        assert plist.get_file_space_strategy()[0] == h5py.h5f.FSPACE_STRATEGY_PAGE
        assert plist.get_file_space_page_size() == 2**20
        assert fh["data"].chunks == (4, 16, 16) and fh["data"].compression == "gzip"
