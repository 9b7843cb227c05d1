"""Tuning in machine time, replayed: fidelity rungs, time budgets, early stops, priors, focus."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from iotune.app.tuning import grid_sweep, replay_outcome, replay_search
from iotune.core.errors import SpecError, UsageError
from iotune.search.fidelity import spearman
from tests.search.conftest import SMALL_SPACE, _synthetic

OBJECTIVE = "read:timeseries"


@pytest.fixture(scope="module")
def rungs_grid():
    """The small space at fidelities 0.25 and 1 (a trial at f costs 0.3 + 4 f seconds)."""
    return _synthetic()({**SMALL_SPACE, "parameters.fidelity": [0.25, 1]}, seed=1, noise=0.2)


@pytest.fixture(scope="module")
def scrambled_grid():
    """The same, but fidelity 0.25 ranks nothing like full size."""
    space = {**SMALL_SPACE, "parameters.fidelity": [0.25, 1]}
    return _synthetic()(space, seed=1, noise=0.2, scramble=True)


def full_seconds(grid) -> float:
    return float(grid["trial_s"].sel(fidelity=1.0).sum())


def search(grid, **overrides):
    given = {
        "search.objective": OBJECTIVE,
        **{k.replace("__", "."): v for k, v in overrides.items()},
    }
    return replay_outcome(grid_sweep(grid, given, "grid"), grid)


def test_a_time_budget_is_spent_within_one_trial(rungs_grid) -> None:
    budget = 0.3 * full_seconds(rungs_grid)
    out = search(rungs_grid, search__budget=f"{budget}s", search__seed=3)
    most = float(rungs_grid["trial_s"].max())
    assert budget <= out.seconds <= budget + most
    assert out.limit.unit == "s" and out.spent == pytest.approx(out.seconds)


def test_new_configurations_start_cheap_and_only_full_size_is_picked(rungs_grid) -> None:
    out = search(rungs_grid, search__budget=f"{0.4 * full_seconds(rungs_grid)}s")
    kinds = {(s.kind, s.visit.fidelity) for s in out.steps}
    assert ("explore", 0.25) in kinds and ("promote", 1.0) in kinds
    assert all(s.visit.fidelity == 0.25 for s in out.steps if s.kind == "explore")
    for step in out.steps:
        if step.kind == "promote":  # measured cheap first, and among the best there
            cheap = [v for v in out.state.visits.values() if v.config == step.visit.config]
            assert any(v.fidelity == 0.25 and v.ok for v in cheap)
    assert out.leader is not None and out.leader.fidelity == 1.0
    assert not out.ladder.fallback and out.ladder.correlation[0.25][1] >= 2


def test_the_results_keep_every_rung_with_fidelity_as_a_coordinate(rungs_grid) -> None:
    overrides = {"search.objective": OBJECTIVE, "search.budget": f"{full_seconds(rungs_grid) / 2}s"}
    ds = replay_search(grid_sweep(rungs_grid, overrides, "grid"), rungs_grid)
    assert set(ds["fidelity"].values) == {0.25, 1.0}
    assert json.loads(ds.attrs["search_fidelity_rungs"]) == [0.25, 1.0]
    assert ds.attrs["search_budget_unit"] == "s" and ds.attrs["search_seconds"] > 0
    assert np.isfinite(ds["search_seconds"].values).all()
    best = ds.iotune.best(OBJECTIVE)  # never a cheap trial
    assert best.coords["fidelity"] == 1.0
    assert json.loads(ds.attrs["search_recommended"])["fidelity"] == 1.0


def test_low_fidelity_that_ranks_unlike_full_size_is_dropped(scrambled_grid) -> None:
    # seed 2: about half the seeds get enough controls at full size to judge this grid
    out = search(
        scrambled_grid, search__budget=f"{3 * full_seconds(scrambled_grid)}s", search__seed=2
    )
    assert "ranks unlike full size" in out.ladder.fallback
    rho, pairs = out.ladder.correlation[0.25]
    assert pairs >= 6 and rho < 0.1
    controls = [s for s in out.steps[: out.ladder.dropped_at] if s.kind == "control"]
    assert len(controls) >= 2  # judged with configurations from the cheap rung's lower half
    assert all(s.visit.fidelity == 1.0 for s in out.steps[out.ladder.dropped_at :])


def test_a_rung_that_ranks_like_full_size_is_kept(rungs_grid) -> None:
    out = search(rungs_grid, search__budget=f"{3 * full_seconds(rungs_grid)}s")
    rho, pairs = out.ladder.correlation[0.25]
    assert not out.ladder.fallback and pairs >= 6 and rho > 0.5


def test_the_fallback_is_said_in_the_results(scrambled_grid) -> None:
    overrides = {
        "search.objective": OBJECTIVE,
        "search.budget": f"{3 * full_seconds(scrambled_grid)}s",
        "search.seed": 2,
    }
    ds = replay_search(grid_sweep(scrambled_grid, overrides, "grid"), scrambled_grid)
    assert "ranks unlike full size" in ds.attrs["search_fidelity_fallback"]
    from iotune.views.console import search_text

    assert "ranks unlike full size" in search_text(ds)


def test_hopeless_trials_stop_repeating_and_say_so(small_grid) -> None:
    out = search(small_grid, search__budget=14, search__seed=2)
    early = [s for s in out.steps if s.result is not None and s.result.stop == "stopped_early"]
    assert early
    for step in early:
        assert len(step.result.write) < 5  # the grid recorded 5 repeats
        leader_bar = out.state.goal.score(out.state.ranked()[0][1].ok)
        assert out.state.goal.score([step.result]) < leader_bar
    kept = search(small_grid, search__budget=14, search__seed=2, search__early_stop=False)
    assert not any(s.result.stop == "stopped_early" for s in kept.steps if s.result)


def test_a_stopped_trial_is_charged_for_the_repeats_it_ran(rungs_grid) -> None:
    out = search(rungs_grid, search__budget=f"{full_seconds(rungs_grid)}s", search__seed=1)
    early = [s for s in out.steps if s.result is not None and s.result.stop == "stopped_early"]
    assert early
    for step in early:
        full = 0.3 + 4 * step.visit.fidelity
        assert step.seconds == pytest.approx(full * len(step.result.write) / 5)


def test_a_time_budget_on_a_grid_without_trial_times_is_refused(small_grid) -> None:
    old = small_grid.drop_vars("trial_s")
    with pytest.raises(UsageError, match=r"search\.budget: a time budget needs the grid's trial"):
        search(old, search__budget="10min")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("5d", r"search\.budget: '5d': unknown unit 'd'; allowed: .* 30min, 2h"),
        ("0min", r"search\.budget: '0min' is not more than 0"),
    ],
)
def test_bad_time_budgets_name_the_field(small_grid, value, message) -> None:
    with pytest.raises(SpecError, match=message):
        grid_sweep(small_grid, {"search.budget": value}, "grid")


def test_time_budgets_in_the_units_people_write(small_grid) -> None:
    for text, seconds in (("30min", 1800), ("2h", 7200), ("90s", 90), ("1.5h", 5400)):
        sweep = grid_sweep(small_grid, {"search.budget": text}, "grid")
        assert sweep.search.budget_seconds == seconds


def prior_of(grid, fidelity: float):
    part = grid.sel(fidelity=fidelity).drop_vars("fidelity")
    swept = [n for n in str(grid.attrs["swept"]).split() if n != "fidelity"]
    part.attrs.update(swept=" ".join(swept), name="smaller", workload=scaled(grid, fidelity))
    return part


def scaled(grid, fidelity: float) -> str:
    """The grid's workload at ``fidelity`` (its first dimension scaled), as results say it."""
    workload = json.loads(grid.attrs["workload"])
    first = next(iter(workload["shape"]))
    workload["shape"][first] = math.ceil(workload["shape"][first] * fidelity)
    return json.dumps(workload)


def test_a_prior_is_measured_first_and_recorded(rungs_grid) -> None:
    from iotune.app.tuning import goal_of
    from iotune.search.prior import SEEDS, load_priors

    overrides = {"search.objective": OBJECTIVE, "search.budget": 12, "parameters.fidelity": 1}
    sweep = grid_sweep(rungs_grid, overrides, "grid")
    priors = load_priors([prior_of(rungs_grid, 0.25)], sweep, goal_of(sweep, sweep.search).weights)
    out = replay_outcome(sweep, rungs_grid, prior=priors)
    assert [s.kind for s in out.steps[:SEEDS]] == ["prior"] * SEEDS
    best = [p.coords for p in priors[0].points[:SEEDS]]
    assert [
        {k: v for k, v in s.visit.coords.items() if k in best[0]} for s in out.steps[:SEEDS]
    ] == best
    (record,) = out.prior
    assert record["source"] == "smaller" and record["seeds_measured"] == SEEDS
    assert record["same_workload"] is False and math.isfinite(record["offset"])


def test_a_prior_sharing_no_parameter_is_refused_in_one_line(rungs_grid) -> None:
    from iotune.app.tuning import goal_of
    from iotune.search.prior import load_priors

    sweep = grid_sweep(rungs_grid, {"search.objective": OBJECTIVE}, "grid")
    other = prior_of(rungs_grid, 0.25).isel(codec=0, chunks=0, chunk_cache=0)
    other.attrs["swept"] = ""
    with pytest.raises(UsageError) as err:
        load_priors([other], sweep, goal_of(sweep, sweep.search).weights)
    text = str(err.value)
    assert text.startswith("search.prior: smaller sweeps nothing; none of it is searched here")
    assert "\n" not in text and "chunks, codec, chunk_cache" in text


def test_a_missing_prior_is_one_line(small_grid, tmp_path) -> None:
    overrides = {"search.prior": [str(tmp_path / "nowhere")], "search.budget": 4}
    sweep = grid_sweep(small_grid, overrides, "grid")
    with pytest.raises(UsageError, match=r"^search\.prior: no results at .*nowhere"):
        replay_outcome(sweep, small_grid)


def test_the_focus_parameters_are_explored_first(small_grid) -> None:
    overrides = {"search.focus": ["codec"], "search.budget": 12, "search.seed": 4}
    out = search(small_grid, **{k.replace(".", "__"): v for k, v in overrides.items()})
    explored = [s.visit.coords for s in out.steps if s.kind == "explore"]
    first = explored[:4]  # the 4 codecs, the others held
    assert {c["chunks"] for c in first} == {"16x16x16"} and {c["chunk_cache"] for c in first} == {
        1048576
    }
    assert len({c["codec"] for c in first}) > 1


def test_spearman_of_ranks() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1)
    assert spearman([1, 1, 2, 3], [1, 2, 3, 4]) == pytest.approx(0.9486832980505138)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))


def test_rungs_that_never_reach_full_size_are_refused(rungs_grid) -> None:
    with pytest.raises(SpecError) as err:
        search(rungs_grid, parameters__fidelity=[0.25], search__budget=4)
    assert str(err.value).startswith("parameters.fidelity: [0.25]: a search climbs to full size")


def test_a_time_budget_ends_when_every_trial_fails_at_once(small_grid, caplog) -> None:
    broken = small_grid.copy()
    broken["status"] = broken["status"].where(broken["status"] != "ok", "failed")
    broken["trial_s"] = broken["trial_s"] * np.nan
    out = search(broken, search__budget="1h")
    assert out.leader is None and out.seconds == 0
    assert "cost no time (every trial failing): stopping" in caplog.text


def test_the_climb_flags_as_near_ties_what_recommend_would_tie() -> None:
    """The cheap rung's configurations the repeats cannot tell from its best (recommend's
    comparison, gap_of) climb as near-ties; one behind beyond noise does not, even on
    two repeats (where a rank test at 0.05 could never separate them)."""
    from iotune.measuring.ratio import gap_of
    from iotune.model.records import Trial, TrialResult
    from iotune.search.fidelity import Ladder
    from iotune.search.state import Goal, State

    state = State(Goal({"write": 1.0}), top=1.0)
    measured = {
        "best": [200.0, 210.0, 190.0],
        "close": [198.0, 204.0, 186.0],
        "behind": [100.0, 101.0],
    }
    for name, writes in measured.items():
        visit = state.visit({"p": name, "fidelity": 0.25}, Trial(name, "memory", {}))
        visit.results.append(TrialResult(name, "ok", write=[{"MiBps": v} for v in writes]))
    found = Ladder((0.25, 1.0)).promotions(state, set())
    flags = {visit.trial.id: near for visit, _fidelity, near in found}
    assert flags == {"best": True, "close": True, "behind": False}
    for name in ("close", "behind"):
        assert flags[name] == gap_of(measured[name], measured["best"]).tied
