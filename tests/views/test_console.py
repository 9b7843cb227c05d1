"""The CLI's texts of results: failures grouped by reason, also for a sweep that swept nothing."""

from __future__ import annotations

import numpy as np
import xarray as xr

from iotune.views.console import failures_lines


def test_a_sweep_of_one_point_that_failed_says_why_in_one_line():
    ds = xr.Dataset({"status": ((), "failed"), "error": ((), "OSError: no space left on device")})
    assert failures_lines(ds) == ["1 trial failed: OSError: no space left on device"]
    ok = xr.Dataset({"status": ((), "ok"), "error": ((), "")})
    assert failures_lines(ok) == []


def test_failures_of_a_grid_name_the_settings_they_share():
    status = np.array([["failed", "ok"], ["failed", "failed"]])
    error = np.array([["blosc: cannot", ""], ["blosc: cannot", "zlib: other"]])
    coords = {"codec": ["blosc-lz4", "zlib"], "shuffle": ["none", "byte"]}
    ds = xr.Dataset(
        {"status": (("codec", "shuffle"), status), "error": (("codec", "shuffle"), error)},
        coords=coords,
    )
    assert failures_lines(ds) == [
        "2 trials failed: blosc: cannot (shuffle=none)",
        "1 trial failed: zlib: other (codec=zlib shuffle=byte)",
    ]
