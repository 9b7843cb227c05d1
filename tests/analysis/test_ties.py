"""What recommend says when measurements cannot tell configurations apart."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from iotune.analysis.recommend import recommend
from iotune.analysis.report import render_text
from iotune.results.dataset import save

UNDECIDED = (
    "cannot decide at this noise: the fastest measured, chunks=8x16x16 codec=none, cannot be "
    "told apart from "
)


def run_cli(capsys: pytest.CaptureFixture, *args: object) -> tuple[int, str, str]:
    from iotune.cli.main import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def seven_repeats(crafted_results, none: list[float], zlib: list[float]) -> xr.Dataset:
    """The crafted results with 7 repeats; 8x16x16 reads time series at ``none``, ``zlib``."""
    ds = crafted_results().isel(repeat=[0, 1, 2, 0, 1, 2, 1])
    ds = ds.assign_coords(repeat=np.arange(7))
    read = ds["read_MiBps"].values.copy()
    at = list(ds["pattern"].values).index("timeseries")
    read[1, 0, at], read[1, 1, at] = none, zlib
    return ds.assign(read_MiBps=(ds["read_MiBps"].dims, read, ds["read_MiBps"].attrs))


def test_within_noise_of_your_settings_says_keep_them_first(crafted_results) -> None:
    """A spec made from a Darshan log names the application's settings (``baseline``).

    The best grid point reads time series 2 % faster than them, well inside the +-5 %
    spread of the repeats: the advice is to keep them, said before anything else.
    """
    ts = crafted_results.READ["timeseries"].copy()
    ts[1, 0] = 9.8  # 8x16x16 none: the application's own settings
    ds = crafted_results(timeseries=ts)
    ds.attrs["baseline"] = json.dumps({"chunks": "8x16x16", "codec": "none"})
    rec = recommend(ds, objective="read:timeseries")
    first = render_text(rec).splitlines()[0]
    assert first.startswith(
        "keep your settings (chunks=8x16x16 codec=none): the pick "
        "(chunks=8x16x16 codec=zlib) is not better beyond noise on read:timeseries (1.02x ["
    )
    assert rec.keep["speedup"] == pytest.approx(10.0 / 9.8)


def test_a_clear_winner_is_not_kept_back(crafted_results) -> None:
    ds = crafted_results()
    ds.attrs["baseline"] = json.dumps({"chunks": "1x64x64", "codec": "none"})
    rec = recommend(ds, objective="read:timeseries")  # 10 against 2 MiB/s
    assert rec.keep == {} and not render_text(rec).startswith("keep")


def test_two_runs_whose_leaders_swap_within_noise_give_the_same_advice(crafted_results) -> None:
    """Re-runs of one sweep: noise puts codec none first in one and zlib in the other."""
    first = crafted_results.READ["timeseries"].copy()
    second = first.copy()
    first[1] = [10.1, 10.0]  # 8x16x16: none ahead by 1 %
    second[1] = [9.9, 10.0]  # 8x16x16: zlib ahead by 1 %
    picks, gave_up = [], []
    for ts in (first, second):
        rec = recommend(crafted_results(timeseries=ts), objective="read:timeseries")
        picks.append(rec.winner.label)
        head, _sep, gave = rec.tie_note.rpartition(": ")
        gave_up.append(gave)
        assert head == (
            "2 configurations cannot be told apart (the 95% bootstrap interval of their ratio "
            "holds 1); picked the smallest stored size within 5% of the fastest, then the "
            "fewest settings changed from the baseline"
        )
    assert picks == ["chunks=8x16x16 codec=zlib"] * 2  # 0.4 MiB against 1 MiB stored
    # what the first gave up for the smaller file; in the second it is the fastest
    assert gave_up == ["the 60% smaller file, 1% slower [-9% to 10%]", "the fastest itself"]


def test_a_leader_40_percent_faster_is_not_a_tie_once_its_interval_excludes_1(
    crafted_results, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Noisy repeats whose ranges overlap (9.6-15.5 against 9-10.8 MiB/s): the median ratio's
    interval over 7 repeats still excludes 1, so the faster is named, not the smaller file."""
    none = [9.6, 13.0, 14.0, 14.0, 14.5, 15.0, 15.5]
    zlib = [9.0, 9.5, 10.0, 10.0, 10.0, 10.5, 10.8]
    path = save(seven_repeats(crafted_results, none, zlib), tmp_path / "results.nc")
    code, out, err = run_cli(capsys, "recommend", path, "--objective", "read:timeseries")
    assert code == 0, err
    assert "winner:     chunks=8x16x16 codec=none" in out.splitlines()
    assert "cannot be told apart" not in out and "cannot decide" not in out


def test_a_noise_floor_of_100_percent_cannot_decide(
    crafted_results, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Two repeats (too few for an interval) and a floor of 100 %: configurations 11 % and
    more behind cannot be told from the leader; that is said first, not a pick by size."""
    ts = crafted_results.READ["timeseries"].copy()
    ts[1] = [11.2, 10.0]
    ds = crafted_results(timeseries=ts).isel(repeat=[0, 2])
    ds.attrs["noise_floor"] = json.dumps({"read:timeseries": 1.0})
    path = save(ds, tmp_path / "results.nc")
    code, out, err = run_cli(capsys, "recommend", path, "--objective", "read:timeseries")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith(UNDECIDED + "4 configurations more than 5% slower (the nearest 11% ")
    assert "2 repeats, the run's noise floor 100%); about " in first
    assert first.endswith(
        " repeats would decide (iotune run --resume with more measure.repeats, or "
        "measure.repeats: auto); named here: the fastest measured"
    )
    assert "winner:     chunks=8x16x16 codec=none" in out.splitlines()  # not the smaller file
    assert "cannot be told apart (the" not in out  # no tie-break note


def test_a_tie_2_percent_apart_picks_the_smaller_file_and_says_the_2_percent(
    crafted_results, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    ts = crafted_results.READ["timeseries"].copy()
    ts[1] = [10.2, 10.0]  # 8x16x16: none ahead of zlib by 2 %, repeats +-5 %
    path = save(crafted_results(timeseries=ts), tmp_path / "results.nc")
    code, out, err = run_cli(capsys, "recommend", path, "--objective", "read:timeseries")
    assert code == 0, err
    assert "winner:     chunks=8x16x16 codec=zlib" in out.splitlines()
    assert out.splitlines()[0].startswith("objective: ")  # decided: nothing said first
    assert (
        "picked the smallest stored size within 5% of the fastest, then the fewest settings "
        "changed from the baseline: the 60% smaller file, 2% slower [-8% to 11%]\n"
    ) in out
    # allowed no loss, the same tie cannot be decided: the fastest is named, and why
    code, out, err = run_cli(
        capsys, "recommend", path, "--objective", "read:timeseries", "--max-tie-loss", "0"
    )
    assert code == 0, err
    assert out.startswith(UNDECIDED + "1 configuration more than 0% slower (the nearest 2% ")
    assert "winner:     chunks=8x16x16 codec=none" in out.splitlines()


def test_a_bad_max_tie_loss_is_one_line_and_exit_2(
    crafted_results, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = save(crafted_results(), tmp_path / "results.nc")
    code, out, err = run_cli(capsys, "recommend", path, "--max-tie-loss", "1.5")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "iotune: error: --max-tie-loss: '1.5'; allowed: a fraction from 0 to 1 (0.05 lets a "
        "tie-break pick a point at most 5% slower than the fastest)"
    ]


def test_below_3_repeats_the_floor_joins_a_tie_and_more_repeats_would_decide(
    crafted_results,
) -> None:
    """Two repeats, apart (10 % on +-5 %), but closer than a 20 % floor: a tie by the floor,
    broken within a 15 % loss, and the note says more repeats would decide."""
    ts = crafted_results.READ["timeseries"].copy()
    ts[1] = [11.1, 10.0]
    ds = crafted_results(timeseries=ts).isel(repeat=[0, 2])
    ds.attrs["noise_floor"] = json.dumps({"read:timeseries": 0.2})
    rec = recommend(ds, objective="read:timeseries", max_tie_loss=0.15, importance=False)
    assert rec.winner.label == "chunks=8x16x16 codec=zlib" and rec.undecided == ""
    assert (
        "; or, below 3 repeats, they differ by less than the run's noise floor, 20%: more "
        "repeats would decide); picked the smallest stored size within 15% of the fastest"
    ) in rec.tie_note
    assert rec.tie_note.endswith(": the 60% smaller file, 10% slower")  # no interval drawn
