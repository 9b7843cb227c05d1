"""Which MPI the mpiio backend uses, as `iotune backends` reports it."""

from __future__ import annotations

import sys

import pytest

from iotune.mpi.library import describe_mpi


@pytest.mark.mpi
def test_names_the_mpi_library_mpi4py_is_linked_against() -> None:
    line = describe_mpi()
    assert "\n" not in line
    assert line.startswith(("MPICH", "Open MPI", "Intel(R) MPI", "MPI")), line
    assert "MPICH" not in line or "mpich wheel" in line or "system" in line


def test_without_mpi4py_it_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # find_spec raises: not importable
    line = describe_mpi()
    assert "pip install 'iotune[mpi]'" in line and "--no-binary mpi4py" in line
