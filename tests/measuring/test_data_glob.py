"""``field: file`` with a glob: several files are one dataset along their record dimension."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from iotune.core.errors import SpecError
from iotune.measuring.data import Field, source_files
from iotune.specfile.parse import load_spec


def write_parts(folder: Path) -> np.ndarray:
    """Three files of two steps each, written out of order: their times decide the order."""
    values = np.arange(6 * 3 * 4, dtype="int16").reshape(6, 3, 4)
    for part, start in (("c", 4), ("a", 0), ("b", 2)):
        xr.Dataset(
            {"v": (("time", "y", "x"), values[start : start + 2])},
            coords={"time": np.arange(start, start + 2)},
        ).to_netcdf(folder / f"{part}.nc")
    return values


def spec_of(folder: Path, path: str) -> Path:
    spec = folder / "spec.yaml"
    workload = {"field": "file", "path": path, "variable": "v"}
    spec.write_text(yaml.safe_dump({"version": 1, "name": "glob", "workload": workload}))
    return spec


def test_a_glob_is_its_files_concatenated_along_time(tmp_path: Path) -> None:
    values = write_parts(tmp_path)
    sweep = load_spec(spec_of(tmp_path, "*.nc"))
    assert sweep.workload.shape == (6, 3, 4) and sweep.workload.dtype == "int16"
    assert [p.name for p in source_files(sweep.workload.path)] == ["a.nc", "b.nc", "c.nc"]
    slabs = [slab for _, slab in Field(sweep.workload).slabs(4)]
    np.testing.assert_array_equal(np.concatenate(slabs), values)


def test_a_glob_that_matches_nothing_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"workload.path: cannot use .*none_\*\.nc"):
        load_spec(spec_of(tmp_path, "none_*.nc"))
