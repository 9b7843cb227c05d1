"""RunOptions: the options of a measured run, checked when made, one line per mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from iotune.core.errors import UsageError
from iotune.runner.options import RunOptions


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"workers": 0}, "--workers: 0; allowed: a whole number of at least 1"),
        ({"workers": True}, "--workers: True; allowed: a whole number of at least 1"),
        ({"per_host": -2}, "--per-host: -2; allowed: a whole number of at least 1"),
        ({"executor": "mpi"}, "--executor: 'mpi'; allowed: serial, dask"),
        ({"scheduler": " "}, "--scheduler: ' '; allowed: an address like tcp://host:8786"),
        ({"out": ""}, "--out: ''; allowed: a directory path"),
        ({"scratch": 3}, "--scratch: 3; allowed: a directory path"),
        ({"force": "yes"}, "--force: 'yes'; allowed: True or False"),
        ({"allow_large": 1}, "--allow-large: 1; allowed: True or False"),
        (
            {"resume": True, "overwrite": True},
            "--resume and --overwrite contradict each other; choose one",
        ),
    ],
)
def test_a_bad_option_is_one_line_naming_it(given: dict, message: str) -> None:
    with pytest.raises(UsageError) as err:
        RunOptions(**given)
    assert str(err.value) == message
    assert "\n" not in str(err.value)


def test_paths_and_counts_are_normalised() -> None:
    options = RunOptions(out="o", scratch=Path("/tmp"), workers="3")  # type: ignore[arg-type]
    assert options == RunOptions(out=Path("o"), scratch=Path("/tmp"), workers=3)
    assert options.out == Path("o") and options.workers == 3


def test_the_default_out_fills_only_a_missing_one() -> None:
    assert RunOptions().with_default_out(Path("results/a")).out == Path("results/a")
    given = RunOptions(out=Path("mine"))
    assert given.with_default_out(Path("results/a")) is given


def test_execution_options_become_overrides_and_imply_dask() -> None:
    assert RunOptions().execution_overrides() == {}
    assert RunOptions(workers=2, per_host=1).execution_overrides() == {
        "execution.workers": 2,
        "execution.per_host": 1,
        "execution.executor": "dask",
    }
    assert RunOptions(executor="serial").execution_overrides() == {"execution.executor": "serial"}


def test_options_are_frozen() -> None:
    options = RunOptions()
    with pytest.raises(AttributeError):
        options.resume = True  # type: ignore[misc]
