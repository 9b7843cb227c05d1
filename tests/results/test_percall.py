"""The user's own code is ranked by calls a second and said as seconds a call.

Its MiB/s counts the bytes that came from storage, which differ by layout; the crafted
results make the fastest call a point that MiB/s ranks low, so only a ranking by the
time a call picks it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iotune.results import percall

#: median seconds a call of ``spatial`` per (chunks, codec): 8x16x16 / none is fastest,
#: though 1x64x64 / zlib has the best MiB/s (60)
SECONDS = np.array([[0.05, np.nan], [0.01, 0.02], [0.03, 0.04]])


@pytest.fixture
def own(crafted_results):
    ds = crafted_results()
    ds["read_s"] = 1 / ds["read_MiBps"]
    spread = crafted_results.SPREAD
    ds["read_s"].loc[{"pattern": "spatial"}] = SECONDS[..., None] * spread[::-1]
    ds.attrs["provenance_user_patterns"] = json.dumps([{"name": "spatial", "call": "m:f"}])
    return ds


def test_the_users_code_is_ranked_by_calls_a_second(own) -> None:
    assert own.iotune.unit("read:spatial") == "calls/s"
    assert own.iotune.unit("read:full") == "MiB/s"  # a built-in: the same bytes everywhere
    best = own.iotune.best("read:spatial")
    assert best.coords == {"chunks": "8x16x16", "codec": "none"}
    assert best.median["read:spatial"] == pytest.approx(100.0)  # 1 / 0.01 s
    time = best.seconds_per_call["read:spatial"]
    assert time["median"] == pytest.approx(0.01)
    assert time["low"] == pytest.approx(0.0095) and time["high"] == pytest.approx(0.0105)
    assert best.from_storage["read:spatial"] == pytest.approx(20.0)  # information only
    assert own.iotune.best("read:full").coords == {"chunks": "contiguous", "codec": "none"}


def test_the_runner_up_is_slower_by_its_time_a_call(own) -> None:
    best = own.iotune.best("read:spatial")
    assert best.separation is not None and best.separation.unit == "calls/s"
    assert "chunks=8x16x16 codec=zlib, 50.0% slower" in best.separation.text


def test_the_time_a_call_reads_as_a_person_says_it() -> None:
    assert percall.said({"median": 0.163, "low": 0.15, "high": 0.17}) == (
        "163 ms a call [150 ms to 170 ms]"
    )
    assert percall.said({"median": 0.0565, "low": np.nan, "high": np.nan}) == "56.5 ms a call"


def test_against_a_named_baseline_the_users_code_compares_times_a_call(fake_results) -> None:
    """A baseline with ten times the MiB/s but twice the time a call: the pick is 2x."""
    from iotune.results.speedup import vs_baselines

    ds = fake_results().copy(deep=True)
    ds.attrs["provenance_user_patterns"] = json.dumps([{"name": "spatial", "call": "m:f"}])
    ds["baseline_status"].loc[{"baseline": "library"}] = "ok"
    ds["baseline_file_bytes"].loc[{"baseline": "library"}] = 1.0
    ds["read_s"][:] = 0.02
    ds["baseline_read_s"][:] = 0.04  # twice as long a call
    ds["baseline_read_MiBps"][:] = ds["read_MiBps"].max() * 10  # ten times the bytes a second
    coords = {d: ds[d].values[0].item() for d in ds.iotune.swept}
    rows = vs_baselines(ds, {"spatial": coords, "full": coords})
    spatial = next(r for r in rows if r["pattern"] == "spatial")
    assert spatial["speedup"] == pytest.approx(2.0) and spatial["per_call"] is True
    full = next(r for r in rows if r["pattern"] == "full")  # a built-in: its MiB/s
    assert full["speedup"] < 0.1 and "per_call" not in full
