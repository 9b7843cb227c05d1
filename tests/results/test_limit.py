"""The device limit on results: fraction_of_limit and its attributes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from iotune.results.limit import attach_limit

LIMIT = {"write_MiBps": 400.0, "read_MiBps": 800.0, "write_method": "O_DIRECT + fsync"}


def test_attach_limit_adds_fraction_of_limit(product_results) -> None:
    ds = product_results()
    out = attach_limit(ds, LIMIT)
    assert "fraction_of_limit" not in ds  # the input is left alone
    frac = out["fraction_of_limit"]
    assert frac.dims == ("chunks", "codec", "chunk_cache", "metric", "repeat")
    assert list(frac["metric"].values) == ["write", "read:full", "read:spatial", "read:timeseries"]
    assert frac.attrs["units"] == "1" and "device limit" in frac.attrs["long_name"]
    np.testing.assert_allclose(frac.sel(metric="write"), ds["write_MiBps"] / 400.0)
    np.testing.assert_allclose(
        frac.sel(metric="read:spatial"), ds["read_MiBps"].sel(pattern="spatial", drop=True) / 800.0
    )
    assert out.attrs["device_limit_write_MiBps"] == 400.0
    assert out.attrs["device_limit_read_MiBps"] == 800.0
    assert attach_limit(ds, None) is ds


def test_attach_limit_survives_netcdf(tmp_path: Path, product_results) -> None:
    from iotune.results.dataset import save

    out = attach_limit(product_results(), LIMIT)
    save(out, tmp_path / "r.nc")
    back = xr.open_dataset(tmp_path / "r.nc")
    assert back["fraction_of_limit"].sel(metric="read:full").notnull().any()
    assert float(back.attrs["device_limit_read_MiBps"]) == 800.0


def test_memory_backend_has_no_device_fraction(product_results) -> None:
    ds = product_results().assign_attrs(backends="memory")
    assert attach_limit(ds, LIMIT)["fraction_of_limit"].isnull().all()
