"""Loading and calling the user's function: forced results, its own last traceback line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from iotune.core.errors import UserCodeError, one_line
from iotune.measuring import usercode
from iotune.model.userpatterns import UserPattern

CODE = """
import numpy as np

def lazy(ds):
    return {"m": ds["data"].mean("x"), "n": 3}

def broken(ds):
    total = ds["data"].sum()
    return total / 0 if False else 1 // 0

def deep(ds):
    return np.reshape(ds["data"].values, (7, 7))

def monthly(ds):
    return ds.assign_coords(time=[0, 1])["data"].resample(time="1MS").mean()
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "userfuncs_for_test.py").write_text(CODE)
    (tmp_path / "run.py").write_text("def run(ds):\n    return ds['data'].max()\n")
    return tmp_path


@pytest.fixture
def dataset() -> xr.Dataset:
    data = np.arange(24, dtype="int16").reshape(2, 3, 4)
    return xr.Dataset({"data": (("time", "y", "x"), data)}).chunk({"time": 1})


def test_a_lazy_result_comes_back_computed(folder: Path, dataset: xr.Dataset) -> None:
    pattern = UserPattern("m", call="userfuncs_for_test:lazy", base=str(folder))
    result = usercode.call(pattern, dataset)
    assert result["m"].chunks is None  # no dask left in it
    np.testing.assert_array_equal(result["m"].values, dataset["data"].values.mean(axis=2))


def test_a_script_is_loaded_by_path(folder: Path, dataset: xr.Dataset) -> None:
    pattern = UserPattern("r", script="run.py", function="run", base=str(folder))
    assert int(usercode.call(pattern, dataset)) == 23


def test_an_error_is_its_last_line_in_the_users_file(folder: Path, dataset: xr.Dataset) -> None:
    pattern = UserPattern("b", call="userfuncs_for_test:broken", base=str(folder))
    with pytest.raises(UserCodeError) as info:
        usercode.call(pattern, dataset)
    assert one_line(info.value) == (
        "b: ZeroDivisionError: integer division or modulo by zero (userfuncs_for_test.py:9)"
    )


def test_an_error_inside_a_library_names_the_users_line(folder: Path, dataset: xr.Dataset) -> None:
    pattern = UserPattern("d", call="userfuncs_for_test:deep", base=str(folder))
    with pytest.raises(UserCodeError, match=r"ValueError: .*\(userfuncs_for_test.py:12\)$"):
        usercode.call(pattern, dataset)


def test_an_error_through_generated_code_names_the_users_line(
    folder: Path, dataset: xr.Dataset
) -> None:
    # xarray's resampler is a dataclass: its generated __init__ is the frame "<string>"
    script = "userfuncs_for_test.py"
    pattern = UserPattern("mo", script=script, function="monthly", base=str(folder))
    with pytest.raises(UserCodeError) as info:
        usercode.call(pattern, dataset)
    assert one_line(info.value).startswith("mo: TypeError: Only valid with DatetimeIndex")
    assert one_line(info.value).endswith("(userfuncs_for_test.py:15)")


def test_a_module_that_fails_to_import_says_so(tmp_path: Path) -> None:
    (tmp_path / "fails_on_import_for_test.py").write_text("import nonexistent_module_xyz\n")
    pattern = UserPattern("x", call="fails_on_import_for_test:f", base=str(tmp_path))
    with pytest.raises(UserCodeError, match="cannot be loaded: ModuleNotFoundError"):
        usercode.load_function(pattern)


def test_process_io_counts_bytes_read() -> None:
    counters = usercode.process_io()
    assert {"read_bytes", "rchar"} <= set(counters)
