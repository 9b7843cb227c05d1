"""The extras: one line naming the extra to install, never a traceback."""

from __future__ import annotations

import pytest

from iotune.core.errors import UsageError
from iotune.core.extras import EXTRAS, MissingExtraError, installed, require


def test_a_missing_module_names_its_extra() -> None:
    with pytest.raises(MissingExtraError) as caught:
        require("iotune_no_such_module", extra="search", feature="iotune tune")
    message = str(caught.value)
    assert message == (
        "iotune tune needs iotune_no_such_module, which is not installed: "
        "pip install 'iotune[search]'"
    )
    assert isinstance(caught.value, UsageError)  # the CLI: one line, exit 2


def test_the_mpi_extra_also_names_the_wheel_for_laptops() -> None:
    with pytest.raises(MissingExtraError, match=r"'iotune\[mpi\]' \(or 'iotune\[mpich\]'"):
        require("iotune_no_such_module", extra="mpi", feature="the mpiio backend")


def test_an_installed_module_passes_and_is_not_imported() -> None:
    import sys

    sys.modules.pop("optuna", None)
    require("optuna", extra="search", feature="iotune tune")
    assert "optuna" not in sys.modules
    assert installed("numpy") and not installed("iotune_no_such_module.sub")


def test_an_unknown_extra_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown extra 'searhc'; known: mpi, mpich"):
        require("numpy", extra="searhc", feature="x")
    assert set(EXTRAS) == {
        *("mpi", "mpich", "jupyter", "search", "darshan", "jobqueue", "objectstore"),
    }
