"""Sources to convert: a CF netCDF file with map chunks, made small in tmp_path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


def make_cf_source(path: Path, *, time: int = 40, y: int = 32, x: int = 24) -> Path:
    """A CF netCDF4 file: packed int16 ``tas`` with a fill value, float ``pr``, both in
    map chunks (1 x y x x); an unlimited ``time`` with units, calendar and bounds."""
    import netCDF4

    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("time", None)
        nc.createDimension("y", y)
        nc.createDimension("x", x)
        nc.createDimension("nv", 2)
        tv = nc.createVariable("time", "f8", ("time",))
        tv.setncatts(
            {"units": "days since 2000-01-01", "calendar": "noleap", "bounds": "time_bnds"}
        )
        tv[:] = np.arange(time)
        bounds = nc.createVariable("time_bnds", "f8", ("time", "nv"))
        bounds[:] = np.stack([np.arange(time), np.arange(time) + 1], axis=1)
        yv = nc.createVariable("y", "f4", ("y",))
        yv.units = "degrees_north"
        yv[:] = np.linspace(-45, 45, y)
        xv = nc.createVariable("x", "f4", ("x",))
        xv.units = "degrees_east"
        xv[:] = np.linspace(0, 350, x)
        tas = nc.createVariable(
            "tas",
            "i2",
            ("time", "y", "x"),
            chunksizes=(1, y, x),
            zlib=True,
            complevel=1,
            fill_value=-999,
        )
        tas.setncatts({"scale_factor": 0.01, "add_offset": 273.15, "units": "K"})
        tas.set_auto_maskandscale(False)
        packed = np.random.default_rng(0).normal(0, 1000, (time, y, x)).astype("i2")
        packed[0, 0, :3] = -999
        tas[:] = packed
        pr = nc.createVariable("pr", "f4", ("time", "y", "x"), chunksizes=(1, y, x))
        pr.units = "kg m-2 s-1"
        pr[:] = np.random.default_rng(1).random((time, y, x)).astype("f4")
        nc.setncatts({"title": "a CF test file", "Conventions": "CF-1.8"})
    return path


@pytest.fixture
def cf_source(tmp_path: Path) -> Path:
    """A small CF netCDF file with map chunks (:func:`make_cf_source`)."""
    return make_cf_source(tmp_path / "source.nc")
