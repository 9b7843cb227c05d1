"""``iotune tune``: a spec, or ``--replay GRID.nc``; then ``iotune recommend`` on its results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iotune.cli.main import main

QUICK = Path(__file__).resolve().parents[1] / "sweeps" / "quick.yaml"


@pytest.fixture(scope="module")
def grid_path(tmp_path_factory) -> Path:
    from iotune.results.dataset import save
    from tests.search.conftest import SMALL_SPACE, _synthetic

    grid = _synthetic()(SMALL_SPACE, seed=1, noise=0.2)
    return save(grid, tmp_path_factory.mktemp("grid") / "grid.nc")


def test_replay_then_recommend_json_gives_the_pick(grid_path: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    args = ["tune", "--replay", str(grid_path), "--objective", "read:timeseries"]
    assert main([*args, "--budget", "25%", "--seed", "7", "-o", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "search 'quick': auto (seed 7), 6 of 6 trials" in printed
    assert f"results: {out / 'results.nc'}" in printed
    assert main(["recommend", str(out), "--objective", "read:timeseries", "--format", "json"]) == 0
    winner = json.loads(capsys.readouterr().out)["winner"]
    from iotune.results.dataset import open_results

    ds = open_results(out)
    assert winner["coords"] == json.loads(ds.attrs["search_recommended"])
    assert "recommended for read:timeseries: " in printed


def test_replay_with_weights_and_a_strategy(grid_path: Path, tmp_path: Path, capsys) -> None:
    args = ["tune", "--replay", str(grid_path), "--objective", "write=1,read:spatial=2"]
    assert main([*args, "--strategy", "random", "--budget", "8", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "random (seed 0), 8 of 8 trials" in printed
    assert "recommended for write=1,read:spatial=2:" in printed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tune"], "iotune: error: tune: give a SPEC, or --replay GRID.nc"),
        (
            ["tune", str(QUICK), "--strategy", "annealing"],
            "iotune: error: --strategy: unknown value 'annealing'; "
            "allowed: grid, random, tpe, gp, auto",
        ),
        (
            ["tune", str(QUICK), "--budget", "1m"],
            "iotune: error: --budget: '1m': unknown unit 'm'; allowed: trials (an integer), "
            "a share like 25%, or a time like 30min, 2h, 90s",
        ),
        (
            ["tune", str(QUICK), "--objective", "read:nope"],
            "iotune: error: --objective: unknown metric 'read:nope'; allowed: write, read:full, "
            "read:spatial, read:timeseries, or weights like write=1,read:spatial=2",
        ),
        (
            ["tune", str(QUICK), "--prior", "nope.nc"],
            "iotune: error: --prior: no results at nope.nc",
        ),
    ],
)
def test_usage_errors_exit_2_in_one_line(args: list[str], message: str, capsys) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_budget_without_a_unit_says_it_counts_trials(capsys) -> None:
    """The flag the user typed is named, not the spec key it overrides."""
    assert main(["tune", str(QUICK), "--budget", "0"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "iotune: --budget 0 counts full-size trials, a cheaper fidelity as its share "
        "(time on the machine: 0min, 0s or 0h)",
        "iotune: error: --budget: 0 is out of range; allowed: >= 2",
    ]


def test_replaying_a_search_is_refused(grid_path: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "s"
    assert main(["tune", "--replay", str(grid_path), "--budget", "6", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["tune", "--replay", str(out / "results.nc")]) == 2
    assert "these are a search's results, not a grid" in capsys.readouterr().err


def test_replaying_a_grid_of_the_users_file_needs_no_data(tmp_path: Path, capsys) -> None:
    """A replay reads only the results: the source file may be gone or elsewhere."""
    import numpy as np
    import xarray as xr
    import yaml

    source = tmp_path / "tas.nc"
    values = np.random.default_rng(0).normal(280, 5, (8, 16, 16)).astype("float32")
    xr.Dataset({"tas": (("time", "lat", "lon"), values)}).to_netcdf(source)
    spec = {
        "version": 1,
        "name": "mine",
        "workload": {"field": "file", "path": "tas.nc", "variable": "tas"},
        "parameters": {"chunks": [[8, 4, 4], [1, 16, 16]], "codec": ["none", "zlib"]},
        "read": {"patterns": ["timeseries"], "timeseries": {"pixels": 4}},
        "measure": {"repeats": 1, "cache": "warm", "fsync": False},
    }
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(spec))
    grid = tmp_path / "grid"
    assert main(["run", str(tmp_path / "mine.yaml"), "-o", str(grid), "--no-progress"]) == 0
    source.unlink()
    capsys.readouterr()
    args = ["tune", "--replay", str(grid), "--budget", "3", "--no-progress"]
    assert main(args) == 0, capsys.readouterr().err
    assert "search 'mine': auto (seed 0), 3 of 3 trials" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["run", "tune"])
def test_an_execution_flag_is_named_as_typed(command: str, capsys) -> None:
    assert main([command, str(QUICK), "--scheduler", "bogus"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "iotune: error: --scheduler: 'bogus' is not an address like tcp://host:8786"
    )


#: a real search, measured in memory: quick enough for every test run
TINY = {
    "version": 1,
    "name": "tiny-search",
    "workload": {"shape": {"time": 8, "y": 32, "x": 32}, "dtype": "int16"},
    "backend": "memory",
    "parameters": {
        "chunks": [[8, 32, 32], [1, 32, 32], [8, 8, 8], [2, 16, 16]],
        "codec": ["none", "zlib", "blosc-lz4"],
        "level": [1, 5],
    },
    "read": {"patterns": ["full"]},
    "measure": {"repeats": 2, "cache": "warm", "fsync": False},
    "search": {"strategy": "auto", "budget": 16, "objective": "write", "seed": 3},
}


def test_tune_and_recommend_name_the_same_configuration(tmp_path: Path, capsys) -> None:
    """tune names what recommend picks from its results: the same ranking and tie-break,
    and, where the leaders cannot be told apart, the same words saying so."""
    import yaml

    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    out = tmp_path / "out"
    assert main(["tune", str(tmp_path / "tiny.yaml"), "-o", str(out), "--no-progress"]) == 0
    tuned = capsys.readouterr().out.splitlines()
    assert main(["recommend", str(out), "--objective", "write"]) == 0
    recommended = [line.strip() for line in capsys.readouterr().out.splitlines()]
    named = next(line for line in tuned if line.startswith("recommended for write: "))
    winner = next(line for line in recommended if line.startswith("winner: "))
    assert named.removeprefix("recommended for write: ") == winner.removeprefix("winner:").strip()
    ties = [line for line in tuned if "cannot be told apart" in line]
    assert ties == [line for line in recommended if "cannot be told apart" in line]
    for line in ties:  # measured, so a tie may or may not happen; when it does, it is said so
        assert (
            line.startswith("cannot decide at this noise: the fastest measured, ")
            or (
                "configurations cannot be told apart (the 95% bootstrap interval of their ratio "
                "holds 1); picked the smallest stored size within 5% of the fastest, then the "
                "fewest settings changed from the baseline: "
            )
            in line
        )


def test_tune_says_a_tie_was_broken_as_recommend_does(tmp_path: Path, capsys) -> None:
    """A replayed grid where the two best overlap: tune names the smaller, and says why."""
    from iotune.results.dataset import save
    from tests.search.conftest import SMALL_SPACE, _synthetic, tied_grid

    grid = save(tied_grid(_synthetic()(SMALL_SPACE, seed=1, noise=0.2)), tmp_path / "grid.nc")
    out = tmp_path / "out"
    args = ["tune", "--replay", str(grid), "--objective", "write", "--strategy", "grid"]
    assert main([*args, "--budget", "30", "-o", str(out), "--no-progress"]) == 0
    tie = (
        "2 configurations cannot be told apart (the 95% bootstrap interval of their ratio "
        "holds 1); picked the smallest stored size within 5% of the fastest, then the fewest "
        "settings changed from the baseline: the 50% smaller file, 1% slower [-3% to 5%]"
    )
    tuned = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(tuned) if line.startswith("recommended for"))
    assert tuned[at : at + 2] == [
        "recommended for write: chunks=4x64x64 codec=zlib chunk_cache=1MiB",
        tie,
    ]
    assert main(["recommend", str(out), "--objective", "write"]) == 0
    recommended = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert "winner:     chunks=4x64x64 codec=zlib chunk_cache=1MiB" in recommended
    assert tie in recommended


#: one tiny real netCDF4 file per codec: zstd stores the smaller (tests/test_cli_portable.py)
PORTABLE = {
    "version": 1,
    "name": "portable-search",
    "workload": {"shape": {"time": 16, "y": 64, "x": 64}, "dtype": "int16", "field": "smooth"},
    "backend": "netcdf4",
    "parameters": {
        "chunks": [[16, 64, 64]],
        "codec": ["zlib", "zstd"],
        "level": 9,
        "shuffle": "none",
    },
    "read": {"patterns": ["full"]},
    "measure": {"repeats": 1, "cache": "warm", "fsync": False},
    # max_ratio_loss 0: only the smallest file may win, zstd's, unless readers rule it out
    "search": {"strategy": "grid", "budget": 4, "objective": "write", "max_ratio_loss": 0},
}


def test_a_portable_tune_names_a_codec_every_reader_opens(tmp_path: Path, capsys) -> None:
    """Without --portable the search names zstd; with it (or search.readers) zlib, and
    recommend on its results agrees."""
    import yaml

    spec = tmp_path / "portable.yaml"
    spec.write_text(yaml.safe_dump(PORTABLE))
    runs = {
        "plain": ([], "zstd"),
        "portable": (["--portable"], "zlib"),
        "readers": (["--readers", "ncdump,h5netcdf"], "zlib"),
    }
    for name, (flags, codec) in runs.items():
        out = tmp_path / name
        assert main(["tune", str(spec), *flags, "-o", str(out), "--no-progress"]) == 0
        named = [line for line in capsys.readouterr().out.splitlines() if "recommended" in line]
        assert named == ["recommended for write: chunks=16x64x64 codec=" + codec], (name, named)
    args = ["recommend", str(tmp_path / "portable"), "--objective", "write"]
    assert main([*args, "--max-ratio-loss", "0", "--portable"]) == 0
    assert "winner:     chunks=16x64x64 codec=zlib" in capsys.readouterr().out


def test_a_bad_search_reader_exits_2_in_one_line(tmp_path: Path, capsys) -> None:
    import yaml

    spec = tmp_path / "portable.yaml"
    spec.write_text(
        yaml.safe_dump({**PORTABLE, "search": {**PORTABLE["search"], "readers": ["ncdmp"]}})
    )
    assert main(["tune", str(spec), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("iotune: error: ")
    assert "search.readers: ['ncdmp']; allowed: all, ncdump," in err[0]


def test_a_multi_fidelity_search_names_what_recommend_picks(tmp_path: Path, capsys) -> None:
    """Promotions, early stops and racing decide with recommend's comparison: on a replayed
    multi-fidelity grid, where trials stopped early and the cheap rung's best climbed to
    full size, the results name the configuration `iotune recommend` picks from them."""
    from iotune.results.dataset import open_results, save
    from tests.search.conftest import SMALL_SPACE, _synthetic

    rungs = {**SMALL_SPACE, "parameters.fidelity": [0.25, 1]}
    grid = save(_synthetic()(rungs, seed=1, noise=0.2), tmp_path / "grid.nc")
    out = tmp_path / "out"
    args = ["tune", "--replay", str(grid), "--objective", "read:timeseries", "--seed", "2"]
    assert main([*args, "--budget", "14", "-o", str(out), "--no-progress"]) == 0
    tuned = capsys.readouterr().out.splitlines()
    assert main(["recommend", str(out), "--objective", "read:timeseries", "--format", "json"]) == 0
    winner = json.loads(capsys.readouterr().out)["winner"]
    ds = open_results(out)
    assert winner["coords"] == json.loads(ds.attrs["search_recommended"])
    assert f"recommended for read:timeseries: {winner['label']}" in tuned
    kinds = [str(k) for k in ds["search_kind"].values.ravel()]
    assert "promote" in kinds  # the climb ran: its choice is in what recommend ranks
    assert "stopped_early" in ds["repeats_stop"].values.ravel().astype(str)
