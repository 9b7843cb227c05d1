"""The command line and the notebook API make the same options objects, and a run uses them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import iotune
from iotune.app import api
from iotune.app.session import Session
from iotune.app.tuning import goal_of, search_overrides
from iotune.cli import actions
from iotune.cli.main import main, parse_args
from iotune.model.objective import Objective
from iotune.runner.options import RunOptions
from iotune.search.state import Goal


def test_run_and_tune_options_are_the_same_from_the_cli_and_the_api(tmp_path: Path) -> None:
    flags = ["-o", str(tmp_path / "o"), "--resume", "--scratch", str(tmp_path), "--force"]
    flags += ["--allow-large", "--workers", "2", "--per-host", "1"]
    kwargs = {"out": tmp_path / "o", "resume": True, "overwrite": False, "scratch": str(tmp_path)}
    kwargs |= {"yes": True, "force": True, "executor": None, "workers": 2, "scheduler": None}
    kwargs |= {"per_host": 1}
    made = api.run_options(**kwargs)
    assert actions.run_options(parse_args(["run", "s.yaml", *flags])) == made
    assert actions.run_options(parse_args(["tune", "s.yaml", *flags])) == made
    assert made.allow_large and made.scratch == tmp_path
    with pytest.raises(iotune.UsageError, match=r"^--workers: 0; allowed"):
        api.run_options(**(kwargs | {"workers": 0}))


def test_objectives_are_the_same_from_the_cli_and_the_api() -> None:
    flags = ["--weights", "write=1,read:full=2", "--max-size", "1KiB", "--max-ratio-loss", "0.5"]
    flags += ["--max-error", "0.1", "--min-digits", "3"]
    given = {"weights": "write=1,read:full=2", "max_size": "1KiB", "max_ratio_loss": "0.5"}
    given |= {"max_error": "0.1", "min_digits": "3"}
    assert actions.objective_of(parse_args(["recommend", "r", *flags])) == Objective.parse(**given)
    assert actions.objective_of(parse_args(["recommend", "r"])) == Objective()
    cli = parse_args(["tune", "s.yaml", "--budget", "8", *flags])
    names = ("strategy", "budget", "seed", "prior", "parallel", *actions.OBJECTIVE_OPTIONS)
    from_cli = search_overrides(**{n: getattr(cli, n) for n in names})
    assert from_cli == search_overrides(budget=8, **given)
    assert from_cli["search.budget"] == 8 and from_cli["search.max_ratio_loss"] == 0.5


def test_a_session_needs_an_output_directory(small_spec) -> None:
    import yaml

    from iotune.specfile.parse import load_spec_text

    sweep = load_spec_text(yaml.safe_dump(small_spec()), source="s.yaml")
    with pytest.raises(ValueError, match=r"options\.out is None"):
        Session(sweep, options=RunOptions(), trials=())


def test_a_grid_run_with_options_recommends_alike_everywhere(
    make_spec, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = RunOptions(out=tmp_path / "out", scratch=tmp_path)
    ds = api.run_with(make_spec({"measure": {"repeats": 3}}), options, progress=False)
    assert (tmp_path / "out" / "results.nc").exists() and not api.any_failed(ds)
    goal = Objective.parse("write", max_ratio_loss=0.9)
    by_object = api.recommend_with(ds, goal)
    by_words = iotune.recommend(ds, objective="write", max_ratio_loss="0.9")
    assert by_object.to_dict() == by_words.to_dict()
    assert ds.iotune.rank_by(goal).best.label == ds.iotune.best("write", max_ratio_loss=0.9).label
    capsys.readouterr()
    argv = ["recommend", str(tmp_path / "out"), "--objective", "write", "--max-ratio-loss", "0.9"]
    assert main([*argv, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(by_object.to_dict()))
    # the search's goal is the same objective, made from its spec section
    sweep = api.load_spec(make_spec({"search": {"objective": "write", "max_ratio_loss": 0.9}}))
    assert sweep.search is not None
    resolved = goal.resolved(["write", "read:full", "read:spatial", "read:timeseries"])
    expected = Goal.of(resolved, full_bytes=sweep.workload.nbytes)
    assert goal_of(sweep, sweep.search) == expected
