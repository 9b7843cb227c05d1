"""The reference answer: made once in a child process, kept, renamed when the code changes."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from iotune.core.errors import UsageError
from iotune.measuring import reference
from iotune.measuring.data import Field
from iotune.model.spec import Workload
from iotune.model.userpatterns import UserPattern

WORKLOAD = Workload(dims=("time", "y", "x"), shape=(12, 8, 8), dtype="int16")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "ref_code_for_test.py").write_text(
        "import os\n\n"
        "def pid(ds):\n"
        "    return {'pid': os.getpid(), 'mean': ds['data'].mean('time')}\n"
    )
    return tmp_path


def test_made_in_a_child_process_from_the_workloads_values(folder: Path) -> None:
    pattern = UserPattern("p", call="ref_code_for_test:pid", base=str(folder))
    path = reference.ensure(folder / "out", WORKLOAD, pattern)
    saved = reference.load(path)
    assert int(saved["result"]["['pid']"]) != os.getpid()  # never in this process
    values = Field(WORKLOAD).slab(0, 12)
    np.testing.assert_array_equal(saved["result"]["['mean']"], values.mean(axis=0))
    assert saved["scale"] == np.abs(values).max()


def test_kept_for_a_resumed_run_and_renamed_when_the_code_changes(folder: Path) -> None:
    pattern = UserPattern("p", call="ref_code_for_test:pid", base=str(folder))
    first = reference.ensure(folder / "out", WORKLOAD, pattern)
    made = first.read_bytes()
    assert reference.ensure(folder / "out", WORKLOAD, pattern) == first
    assert first.read_bytes() == made  # not made again: a resumed run compares with it
    code = folder / "ref_code_for_test.py"
    code.write_text(code.read_text() + "\n# edited\n")
    assert reference.reference_path(folder / "out", WORKLOAD, pattern) != first


def test_a_function_that_fails_in_memory_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "run.py").write_text("def run(ds):\n    return 1 / 0\n")
    pattern = UserPattern("r", script="run.py", function="run", base=str(tmp_path))
    with pytest.raises(UsageError, match=r"ZeroDivisionError: division by zero \(run.py:2\)"):
        reference.ensure(tmp_path / "out", WORKLOAD, pattern)
    assert not (tmp_path / "out" / reference.FOLDER).exists()
