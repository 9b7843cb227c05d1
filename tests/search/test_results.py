"""A search's results: sparse, the same schema, read through ds.iotune, densified for plots."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iotune.app.tuning import grid_sweep, replay_search
from iotune.results.dataset import open_results, save


@pytest.fixture(scope="module")
def searched(small_grid):
    overrides = {"search.budget": 14, "search.objective": "read:timeseries", "search.seed": 2}
    return replay_search(grid_sweep(small_grid, overrides, "grid"), small_grid)


def test_only_the_visited_points_are_stored(searched) -> None:
    visits = searched.sizes["point"]
    assert visits < 24 and searched.sizes["trial"] == 14
    assert searched.iotune.swept == ("chunks", "codec", "chunk_cache")
    assert set(searched["search_kind"].values) <= {"explore", "remeasure"}
    assert int(searched["measurements"].sum()) == 14
    # re-measurements are pooled along repeat: 5 repeats per trial, fewer where a
    # hopeless trial stopped early, and the point says so
    counts = (~np.isnan(searched["write_MiBps"])).sum("repeat").values
    early = searched["repeats_stop"].values == "stopped_early"
    full = 5 * searched["measurements"].values
    assert (counts[~early] == full[~early]).all()
    assert early.any() and (counts[early] < full[early]).all()


def test_parameter_coordinates_carry_the_registry_labels(searched) -> None:
    assert searched["chunk_cache"].attrs == {"long_name": "chunk cache size", "units": "bytes"}
    assert searched["codec"].attrs == {"long_name": "compression codec"}


def test_round_trip_and_the_accessor(searched, tmp_path) -> None:
    ds = open_results(save(searched, tmp_path / "results.nc"))
    rows = ds.iotune.points()
    assert len(rows) == ds.sizes["point"]
    assert set(rows[0]) >= {"chunks", "codec", "chunk_cache", "write", "read:timeseries"}
    assert ds.iotune.counts() == {"ok": ds.sizes["point"]}
    from iotune.analysis.recommend import recommend

    picked = recommend(ds, objective="read:timeseries", importance=False).winner
    assert picked.coords == json.loads(ds.attrs["search_recommended"])
    assert ds.attrs["search_strategy"] == "auto" and ds.attrs["search_seed"] == 2
    order = ds["search_point"].values
    assert order[0] == 0 and set(order) == set(range(ds.sizes["point"]))


def test_densified_for_plots(searched, small_grid) -> None:
    dense = searched.iotune.dense()
    assert "point" not in dense.dims
    assert dense.iotune.swept == ("chunks", "codec", "chunk_cache")
    size = int(np.prod([dense.sizes[d] for d in dense.iotune.swept]))
    counts = dense.iotune.counts()
    assert counts["ok"] == searched.sizes["point"]
    assert counts["ok"] + counts.get("pending", 0) == size
    # each stored value lands at its own coordinates
    first = searched.isel(point=0)
    cell = dense.sel({d: first[d].item() for d in dense.iotune.swept})
    assert np.array_equal(cell["write_MiBps"].values, first["write_MiBps"].values, equal_nan=True)
    assert dense.iotune.dense() is dense


def test_figures_of_a_search(searched, small_grid) -> None:
    pytest.importorskip("matplotlib")
    from iotune import plot

    figures = plot.all_figures(searched)
    assert {"convergence", "importance", "heatmap-read", "write"} <= set(figures)
    fig = plot.convergence(searched, small_grid)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "grid's best" in labels and "pick so far: its grid median" in labels


def test_the_pick_breaks_a_tie_as_recommend_does_where_the_leader_would_not(small_grid) -> None:
    """Two configurations whose repeats overlap: the search's running leader (the best
    median) stores twice as much as the other; tune names the smaller, as recommend does,
    and says why."""
    from iotune.analysis.recommend import recommend
    from iotune.app.tuning import replay_outcome
    from iotune.search.results import search_dataset
    from tests.search.conftest import TIED_BIG as big
    from tests.search.conftest import TIED_SMALL as small
    from tests.search.conftest import tied_grid

    grid = tied_grid(small_grid)
    overrides = {"search.budget": 30, "search.objective": "write", "search.strategy": "grid"}
    sweep = grid_sweep(grid, overrides, "grid")
    outcome = replay_outcome(sweep, grid)
    ds = search_dataset(sweep, outcome)
    assert outcome.leader is not None and outcome.leader.coords == big  # what tune named before
    assert json.loads(ds.attrs["search_recommended"]) == small
    assert ds.attrs["search_recommended_label"] == "chunks=4x64x64 codec=zlib chunk_cache=1MiB"
    assert ds.attrs["search_tie"] == (
        "2 configurations cannot be told apart (the 95% bootstrap interval of their ratio "
        "holds 1); picked the smallest stored size within 5% of the fastest, then the fewest "
        "settings changed from the baseline: the 50% smaller file, 1% slower [-3% to 5%]"
    )
    assert ds.attrs["search_undecided"] == ""
    assert recommend(ds, objective="write", importance=False).winner.coords == small
