"""One meaning per option across commands, JSON where a command describes something,
old spellings that still work, and ``tune`` taking what ``run`` and ``recommend`` take."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from iotune.cli.main import DEPRECATED, _parser, main, undeprecate
from iotune.core.errors import DeprecatedOptionWarning

ROOT = Path(__file__).resolve().parents[1]
MINIMAL = ROOT / "tests" / "fixtures" / "specs" / "minimal.yaml"
TINY = """\
version: 1
name: tiny
workload: {shape: {time: 4, y: 32, x: 32}}
backend: posix
parameters: {transfer_size: [64KiB, 256KiB]}
read: {patterns: [full]}
measure: {repeats: 1}
"""


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = _parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _signature(action: argparse.Action) -> tuple:
    return (action.dest, type(action).__name__, action.type, action.choices, action.nargs)


def test_an_option_means_the_same_on_every_command() -> None:
    seen: dict[str, dict[str, tuple]] = {}
    for command, parser in subparsers().items():
        for action in parser._actions:
            for option in action.option_strings:
                seen.setdefault(option, {})[command] = _signature(action)
    differing = {o: by for o, by in seen.items() if len(set(by.values())) > 1}
    assert differing == {}


def test_every_output_is_dash_o() -> None:
    for command, parser in subparsers().items():
        writes = [a for a in parser._actions if a.dest == "out" and a.option_strings]
        for action in writes:
            assert action.option_strings == ["-o", "--out"], command
    assert not any("--spec" in a.option_strings for p in subparsers().values() for a in p._actions)


def test_tune_takes_every_execution_and_objective_option_of_run_and_recommend() -> None:
    parsers = subparsers()

    def options(name: str) -> set[str]:
        return {o for a in parsers[name]._actions for o in a.option_strings}

    shared_run = options("run") - {"-h", "--help"}
    shared_recommend = options("recommend") - {"--variable", "--format", "-h", "--help"}
    assert shared_run <= options("tune")
    assert shared_recommend <= options("tune")


@pytest.mark.parametrize("command", ["validate", "plan", "show", "recommend", "backends"])
def test_describing_commands_have_json(command: str) -> None:
    action = next(a for a in subparsers()[command]._actions if a.dest == "format")
    assert action.choices == ("text", "json") and action.default == "text"


def test_validate_and_plan_as_json(capsys) -> None:
    assert main(["validate", str(MINIMAL), "--format", "json"]) == 0
    valid = json.loads(capsys.readouterr().out)
    assert valid["valid"] is True and valid["grid_points"] >= 1 and valid["name"]
    assert main(["plan", str(MINIMAL), "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert len(plan["trials"]) >= 1 and {"id", "backend", "params", "hints"} <= set(
        plan["trials"][0]
    )


def test_a_bad_spec_is_still_one_line_with_json(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY.replace("posix", "posixx"))
    assert main(["validate", str(bad), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert "backend" in captured.err and "posix" in captured.err


def test_backends_as_json(capsys) -> None:
    assert main(["backends", "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    names = {b["name"] for b in info["backends"]}
    assert {"netcdf4", "h5py", "zarr", "posix", "memory", "mpiio"} <= names
    mpiio = next(b for b in info["backends"] if b["name"] == "mpiio")
    assert mpiio["extra"] == "mpi" and "nprocs" in mpiio["parameters"]
    assert info["mpi_library"] and "search" in info["extras"]


def test_run_then_show_as_json_and_tune_with_run_options(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY)
    out = tmp_path / "grid"
    assert main(["run", str(spec), "-o", str(out), "--no-progress", "--force", "-q"]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["name"] == "tiny" and shown["counts"] == {"ok": 2}
    assert len(shown["points"]) == 2 and shown["best"][0]["metric"] == "write"
    tuned = tmp_path / "tuned"
    args = ["tune", str(spec), "-o", str(tuned), "--budget", "2", "--strategy", "grid"]
    args += ["--weights", "write=1,read:full=1", "--max-ratio-loss", "0.5", "--force"]
    assert main([*args, "--executor", "serial", "--no-progress", "--allow-large"]) == 0
    assert (tuned / "results.nc").is_file()


def test_old_spellings_work_and_warn_once() -> None:
    with pytest.warns(DeprecatedOptionWarning, match="--yes is deprecated, use --allow-large"):
        assert undeprecate(["plan", "s.yaml", "--yes"]) == ["plan", "s.yaml", "--allow-large"]
        assert undeprecate(["calibrate", "--block", "1MiB"]) == [
            "calibrate",
            "--transfer-size",
            "1MiB",
        ]
    with pytest.warns(DeprecatedOptionWarning) as caught:
        argv = ["darshan", "x.darshan", "--spec=a.yaml", "--budget", "1GiB"]
        assert undeprecate(argv) == ["darshan", "x.darshan", "--out=a.yaml", "--trial-size", "1GiB"]
    assert len(caught) == 2
    # --budget is only deprecated on darshan: tune's is its search budget
    assert undeprecate(["tune", "s.yaml", "--budget", "25%"]) == [
        "tune",
        "s.yaml",
        "--budget",
        "25%",
    ]
    assert set(DEPRECATED.values()) <= {"--allow-large", "--out", "--trial-size", "--transfer-size"}


def test_an_old_spelling_runs_and_says_so_on_stderr(tmp_path: Path, capsys) -> None:
    assert main(["plan", str(MINIMAL), "--yes"]) == 0
    err = capsys.readouterr().err
    assert "iotune: warning: --yes is deprecated, use --allow-large" in err


def test_quiet_hides_warnings_and_verbose_is_accepted_anywhere(capsys) -> None:
    assert main(["-q", "plan", str(MINIMAL), "--yes"]) == 0
    assert "deprecated" not in capsys.readouterr().err
    assert main(["plan", "-v", str(MINIMAL)]) == 0
    assert main(["-vv", "validate", str(MINIMAL)]) == 0


def test_options_that_set_a_parameter_are_spelled_like_it() -> None:
    """``calibrate --transfer-size`` is what a sweep calls ``transfer_size`` (once ``--block``)."""
    from iotune.model.parameters import PARAMETERS

    setting = {
        option
        for parser in subparsers().values()
        for action in parser._actions
        for option in action.option_strings
        if action.dest in PARAMETERS
    }
    assert {"--transfer-size", "--part-size", "--request-concurrency"} <= setting
    assert all(
        o == "--" + o[2:].replace("_", "-") and o[2:].replace("-", "_") in PARAMETERS
        for o in setting
    )
