"""Variables that do not start with the region dimension: copied and verified by blocks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from iotune.cli.main import main
from iotune.convert.convert import convert, prepare
from iotune.convert.layout import layout_of
from iotune.core.errors import UsageError

DIMS = ("time", "y", "x")


def make_static_source(path: Path) -> Path:
    """Small ``tas(time, y, x)`` beside large ``orog(lat, lon)`` and ``hist(lat, time)``."""
    import netCDF4

    rng = np.random.default_rng(3)
    with netCDF4.Dataset(path, "w") as nc:
        for dim, length in (("time", 8), ("y", 16), ("x", 16), ("lat", 64), ("lon", 64)):
            nc.createDimension(dim, length)
        nc.createVariable("tas", "f4", DIMS)[:] = rng.random((8, 16, 16))
        orog = nc.createVariable("orog", "f8", ("lat", "lon"), chunksizes=(8, 64), zlib=True)
        orog.units = "m"
        orog[:] = rng.random((64, 64)) * 1000  # 32 KiB
        nc.createVariable("hist", "f8", ("lat", "time"))[:] = rng.random((64, 8))
        nc.createVariable("scale", "f4", ())[...] = 2.5
    return path


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_static_fields_larger_than_the_limit_are_copied_by_blocks(
    tmp_path: Path, suffix: str
) -> None:
    source = make_static_source(tmp_path / "static.nc")
    target = tmp_path / f"out{suffix}"
    layout = layout_of({"chunks": "4x8x8", "backend": suffix.strip(".").replace("nc", "netcdf4")})
    job = prepare(source, target, layout, max_mem=20_000)  # orog alone needs 64 KiB
    assert job.whole_blocks["orog"] == [(0, 19), (19, 38), (38, 57), (57, 64)]  # 19 rows of 512 B
    assert all(2 * 512 * (b - a) <= 20_000 for a, b in job.whole_blocks["orog"])
    assert job.whole_blocks["scale"] == [(0, 0)]
    convert(job, verify_mode="full")
    engine = "zarr" if suffix == ".zarr" else "netcdf4"
    with xr.open_dataset(source) as before, xr.open_dataset(target, engine=engine) as after:
        xr.testing.assert_identical(before.load(), after.load())


def test_a_row_too_large_for_the_limit_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_static_source(tmp_path / "static.nc")
    with pytest.raises(UsageError, match=r"one row of orog \(lat, lon\) along lat needs 1KiB"):
        prepare(source, tmp_path / "out.nc", layout_of({"chunks": "1x8x8"}), max_mem=1000)
    args = ["--settings", "chunks=1x8x8", "--max-mem", "1000B", str(source), "-o"]
    assert main(["apply", *args, str(tmp_path / "out.nc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "iotune: error: --max-mem 1000B: one row of orog (lat, lon) along lat needs 1KiB; "
        "raise --max-mem"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["static.nc"]


def test_a_block_that_differs_fails_verification(tmp_path: Path) -> None:
    from iotune.convert.source import open_source
    from iotune.convert.verify import verify
    from iotune.convert.whole import plan_whole
    from iotune.core.errors import VerificationError

    source = open_source(make_static_source(tmp_path / "static.nc"))
    blocks = plan_whole(source.ds, ["orog"], max_mem=20_000)

    def read(name: str, start: int | None, stop: int | None) -> np.ndarray:
        values = np.array(source.ds[name].values[start:stop])
        if start == 38:
            values[0, 0] += 1
        return values

    with pytest.raises(VerificationError, match="orog rows 38-57 of lat differs"):
        verify(
            source,
            read,
            by_region=[],
            whole=["orog"],
            regions=[],
            region_dim="time",
            mode="full",
            whole_blocks=blocks,
        )
    source.close()
