"""The pick names the readers that open it; ``--portable`` keeps to codecs they open as is.

One tiny real netCDF4 sweep of zlib and zstd at level 9, where zstd stores the
smaller file: ``--max-ratio-loss 0`` picks it deterministically, with ``--portable``
zlib.  The system's ``ncdump`` (netcdf-bin, installed in CI) reads the targets:
skipped where it is missing unless ``IOTUNE_REQUIRE_NCDUMP=1``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from iotune.app import api
from iotune.cli.main import main
from tests.convert.conftest import make_cf_source

SPEC = {
    "version": 1,
    "name": "portable",
    "workload": {"shape": {"time": 16, "y": 64, "x": 64}, "dtype": "int16", "field": "smooth"},
    "backend": "netcdf4",
    "parameters": {
        "chunks": [[16, 64, 64]],
        "codec": ["zlib", "zstd"],
        "level": 9,
        "shuffle": "none",
    },
    "read": {"patterns": ["full"]},
    "measure": {"repeats": 1},
}
SMALLEST = ["--max-ratio-loss", "0"]  # the smaller file wins: zstd's


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("portable")
    spec = where / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    ds = api.run(spec, out=where / "results", progress=False)
    sizes = {p["codec"]: p["file_bytes"] for p in ds.iotune.points()}
    assert sizes["zstd"] < sizes["zlib"], sizes  # what SMALLEST relies on
    return where / "results"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_zstd_pick_warns_naming_the_plugin_and_the_readers(results, capsys) -> None:
    code, out, _ = cli(capsys, "recommend", str(results), *SMALLEST)
    assert code == 0
    assert "winner:     chunks=16x64x64 codec=zstd" in out
    assert (
        "warning: ncdump, nccopy, netcdf4-python, xarray-netcdf4 open codec zstd only with "
        "the HDF5 zstd filter plugin (id 32015):\n" in out
    )
    assert "  export HDF5_PLUGIN_PATH=$(python -c 'import hdf5plugin;" in out
    assert "warning: h5netcdf, xarray-h5netcdf, h5py open codec zstd only with hdf5plugin" in out
    code, out, _ = cli(capsys, "recommend", str(results), *SMALLEST, "--format", "json")
    readers = json.loads(out)["readers"]
    assert readers["readers"] == [] and readers["codec"] == "zstd"
    assert [p["plugin"] for p in readers["plugins"]] == [
        "the HDF5 zstd filter plugin (id 32015)",
        "hdf5plugin",
    ]
    code, out, _ = cli(capsys, "show", str(results), "--format", "json")
    assert json.loads(out)["recommended"]["readers"]["codec"] in ("zlib", "zstd")


def test_portable_picks_zlib_and_says_what_it_left_out(results, capsys) -> None:
    for flags in (["--portable"], ["--readers", "h5netcdf"]):
        code, out, err = cli(capsys, "recommend", str(results), *SMALLEST, *flags)
        assert code == 0, err
        assert "winner:     chunks=16x64x64 codec=zlib" in out
        assert f"{' '.join(flags)}: left out 1 point whose codec needs a plugin (zstd)" in out
        assert "readers: ncdump, nccopy, netcdf4-python" in out and "warning:" not in out
    # zarr-python opens zstd itself: nothing to leave out of a netCDF4 sweep's ranking for it
    code, out, _ = cli(capsys, "recommend", str(results), *SMALLEST, "--readers", "zarr-python")
    assert "codec=zstd" in out.split("winner:")[1].splitlines()[0]


def test_an_unknown_reader_is_a_usage_error_listing_the_readers(results, capsys) -> None:
    code, _, err = cli(capsys, "recommend", str(results), "--readers", "ncdmp")
    assert code == 2
    assert err.strip().splitlines() == [
        "iotune: error: --readers: 'ncdmp' is not a reader; allowed: all, ncdump, nccopy, "
        "netcdf4-python, xarray-netcdf4, h5netcdf, xarray-h5netcdf, h5py, h5dump, h5repack, "
        "zarr-python, xarray-zarr, icechunk-python"
    ]


def ncdump() -> str:
    found = shutil.which("ncdump")
    if found is None:
        if os.environ.get("IOTUNE_REQUIRE_NCDUMP") == "1":
            pytest.fail("IOTUNE_REQUIRE_NCDUMP=1 but no ncdump (apt-get install netcdf-bin)")
        pytest.skip("no ncdump (apt-get install netcdf-bin)")
    return found


def test_ncdump_reads_the_portable_apply_and_fails_the_zstd_one_as_warned(
    results, capsys, tmp_path: Path
) -> None:
    program = ncdump()
    source = make_cf_source(tmp_path / "source.nc")
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}  # netCDF4 sets it
    said = {}
    for name, flags in (("portable", ["--portable"]), ("zstd", [])):
        target = tmp_path / f"{name}.nc"
        options = ["--no-progress", "--no-measure", *SMALLEST, *flags]
        code, said[name], err = cli(
            capsys, "apply", str(results), str(source), "-o", str(target), *options
        )
        assert code == 0, err
    assert "codec=zlib" in said["portable"].splitlines()[0] and "warning" not in said["portable"]
    assert "--portable: left out 1 point whose codec needs a plugin (zstd)" in said["portable"]
    assert "codec=zstd" in said["zstd"].splitlines()[0]
    assert "warning: ncdump, nccopy" in said["zstd"]
    read = subprocess.run([program, str(tmp_path / "portable.nc")], env=env, capture_output=True)
    assert read.returncode == 0, read.stderr
    read = subprocess.run([program, str(tmp_path / "zstd.nc")], env=env, capture_output=True)
    assert read.returncode != 0
    assert b"Filter error" in read.stderr
