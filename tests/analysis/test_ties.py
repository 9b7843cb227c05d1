"""What recommend says when measurements cannot tell configurations apart."""

from __future__ import annotations

import json

import pytest

from iotune.analysis.recommend import recommend
from iotune.analysis.report import render_text


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
        "keep your settings (chunks=8x16x16 codec=none): the best measured, "
        "chunks=8x16x16 codec=zlib, is not better beyond noise on read:timeseries (1.02x ["
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
    picks = []
    for ts in (first, second):
        rec = recommend(crafted_results(timeseries=ts), objective="read:timeseries")
        picks.append(rec.winner.label)
        assert rec.tie_note == (
            "2 configurations cannot be told apart (their repeats overlap); picked the "
            "smallest stored size, then the fewest settings changed from the baseline"
        )
    assert picks == ["chunks=8x16x16 codec=zlib"] * 2  # 0.4 MiB against 1 MiB stored
