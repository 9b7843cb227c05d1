"""A trial budget counts full-size trials: a trial at fidelity f counts as f of one.

Replayed through ``iotune tune --replay`` on recorded grids (synthetic, saved as
results files), as a user replays one.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from iotune.cli.main import main
from tests.search.conftest import SMALL_SPACE, _synthetic


@pytest.fixture(scope="module")
def eighth_grid(tmp_path_factory) -> Path:
    """The small space (24 configurations) recorded at fidelities 1/8 and 1."""
    from iotune.results.dataset import save

    rungs = {**SMALL_SPACE, "parameters.fidelity": [0.125, 1]}
    path = tmp_path_factory.mktemp("eighth") / "results.nc"
    return save(_synthetic()(rungs, seed=1, noise=0.2), path)


def tuned(grid: Path, budget: int | str, out: Path, capsys) -> tuple[list[float], str]:
    """The fidelity of each trial a replayed search ran, in order, and what tune printed."""
    from iotune.results.dataset import open_results

    args = ["tune", "--replay", str(grid), "--objective", "read:timeseries", "--seed", "3"]
    assert main([*args, "--budget", str(budget), "-o", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    ds = open_results(out)
    points = ds["search_point"].values.astype(int)
    if "fidelity" not in ds.coords:
        return [1.0] * len(points), printed
    return [float(ds["fidelity"].values[p]) for p in points], printed


@pytest.mark.parametrize("budget", [5, 8])
def test_cheap_trials_count_as_their_share_of_a_trial_budget(
    eighth_grid: Path, budget: int, tmp_path: Path, capsys
) -> None:
    fidelities, printed = tuned(eighth_grid, budget, tmp_path / "out", capsys)
    spent = math.fsum(fidelities)
    assert len(fidelities) > budget  # more launches than the budget: eight cheap ones make one
    assert spent <= budget  # never more than the budget, counted in full-size trials
    assert spent > budget - 1  # and no full-size trial's worth left unspent
    assert fidelities.count(0.125) > fidelities.count(1.0) >= 2  # explored cheap, then climbed
    assert (
        f"{len(fidelities)} trials costing {spent:g} of a budget of {budget} full-size trials "
        "(cheap trials count as their share)"
    ) in printed


def test_a_share_of_the_space_is_a_share_of_its_full_size_cost(
    eighth_grid: Path, tmp_path: Path, capsys
) -> None:
    """``25%`` of 24 configurations: 6 full-size trials' worth, most of it spent cheap."""
    from iotune.results.dataset import open_results

    fidelities, _ = tuned(eighth_grid, "25%", tmp_path / "out", capsys)
    ds = open_results(tmp_path / "out")
    assert ds.attrs["search_budget"] == 6 and ds.attrs["search_budget_unit"] == "trials"
    assert ds.attrs["search_spent"] == pytest.approx(math.fsum(fidelities))
    assert len(fidelities) > 6 and math.fsum(fidelities) <= 6


def test_without_rungs_a_trial_budget_is_that_many_trials(
    small_grid_path: Path, tmp_path: Path, capsys
) -> None:
    fidelities, printed = tuned(small_grid_path, 7, tmp_path / "out", capsys)
    assert len(fidelities) == 7
    assert "auto (seed 3), 7 of 7 trials" in printed


def test_a_batch_is_as_wide_as_the_budget_allows() -> None:
    """Parallel trials: a time budget asks ``parallel`` at once; a trial budget only what
    fits, eight cheap ones to a full-size trial."""
    from iotune.search.budget import Budget

    assert Budget(seconds=60.0).launches_left([], 1.0, 4) == 4
    assert Budget(trials=2).launches_left([], 1.0, 4) == 2
    assert Budget(trials=2).launches_left([], 0.125, 20) == 16
