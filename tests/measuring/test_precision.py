"""Adaptive repeats: the interval of the median, the stopping rule, the warm-up, the Dataset."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
import xarray as xr
import yaml

from iotune.app import api
from iotune.backends.base import SlabBackend
from iotune.core.errors import SpecError
from iotune.measuring import precision
from iotune.model.records import TrialResult, TrialTask
from iotune.model.spec import MeasureSpec
from iotune.runner import trial
from iotune.runner.plan import make_plan
from iotune.runner.trial import run_trial
from iotune.specfile.parse import load_spec_text

AUTO = MeasureSpec(adaptive=True, precision=0.05, max_repeats=20)


def coverage(n: int, j: int) -> float:
    """P(x_(j) <= median <= x_(n+1-j)) by brute force over the signs of n draws."""
    below = sum(math.comb(n, k) for k in range(j)) / 2**n
    return 1 - 2 * below


@pytest.mark.parametrize("n", range(1, 40))
def test_the_interval_uses_the_largest_rank_that_keeps_95_percent(n):
    j = precision._rank(n, 0.95)
    if n < precision.MIN_AUTO_REPEATS:
        assert j == 0
        return
    assert coverage(n, j) >= 0.95
    assert j == n // 2 or coverage(n, j + 1) < 0.95


def test_known_intervals():
    assert precision.median_interval([5, 1, 4, 2, 3]) is None  # 93.75 % at best
    assert precision.median_interval([6, 1, 5, 2, 4, 3]) == (1, 6)  # 96.9 %
    assert precision.median_interval(list(range(1, 10))) == (2, 8)  # n = 9: j = 2
    assert precision.median_interval([1, 2, float("nan"), 3, 4, 5, 6]) == (1, 6)


def test_the_interval_covers_the_median_95_percent_of_the_time():
    rng, hits = np.random.default_rng(7), 0
    for _ in range(2000):
        low, high = precision.median_interval(rng.lognormal(0, 0.5, 11).tolist())
        hits += low <= 1.0 <= high  # the lognormal's median is exp(0) = 1
    assert 0.95 <= hits / 2000 <= 0.995


def fed(values):
    """A stand-in trial whose k-th repeat measures ``values[k]`` (write and a read)."""
    result = TrialResult("t", "ok")
    for k in precision.repeat_indices(AUTO, result):
        result.write.append({"MiBps": values[k]})
        result.reads.setdefault("full", []).append({"MiBps": values[k]})
    return result


def test_a_quiet_trial_stops_at_the_first_count_with_an_interval():
    assert len(fed([100.0 + 0.1 * k for k in range(40)]).write) == precision.MIN_AUTO_REPEATS


def test_the_stopping_rule_stops_exactly_when_the_interval_is_narrow_enough():
    # six wild repeats, then steady ones: the interval narrows as steady ones pile up
    wild = [50.0, 150.0, 60.0, 140.0, 70.0, 130.0]
    values = wild + [100.0] * 40
    n = len(fed(values).write)
    assert precision.relative_half_width(values[:n]) <= 0.05
    assert precision.relative_half_width(values[: n - 1]) > 0.05
    assert n < 20


def test_a_noisy_trial_stops_at_max_repeats():
    rng = random.Random(3)
    values = [rng.choice([50.0, 150.0]) for _ in range(40)]
    assert len(fed(values).write) == AUTO.max_repeats


def test_every_metric_must_be_precise():
    result = TrialResult("t", "ok")
    steady, wild = itertools.repeat(100.0), itertools.cycle([50.0, 150.0])
    for _k in precision.repeat_indices(AUTO, result):
        result.write.append({"MiBps": next(steady)})
        result.reads.setdefault("spatial", []).append({"MiBps": next(wild)})
    assert len(result.write) == AUTO.max_repeats


def test_fixed_repeats_are_fixed():
    result = TrialResult("t", "ok")
    assert list(precision.repeat_indices(MeasureSpec(repeats=3), result)) == [0, 1, 2]
    assert list(precision.batches(MeasureSpec(repeats=4), result)) == [4]


SPEC = {
    "version": 1,
    "workload": {"shape": {"time": 16, "y": 64, "x": 64}},
    "backend": "netcdf4",
    "parameters": {"chunks": [[16, 16, 16], [1, 64, 64]], "codec": "zlib"},
    "read": {"patterns": ["full", "timeseries"], "timeseries": {"pixels": 4}},
}


@pytest.mark.parametrize(
    ("measure", "field", "message"),
    [
        ({"repeats": "auto", "precision": "0%"}, "measure.precision", "'0%' is not allowed"),
        ({"repeats": "auto", "precision": "five"}, "measure.precision", "not allowed"),
        ({"repeats": "auto", "max_repeats": 3}, "measure.max_repeats", "6"),
        ({"repeats": 3, "precision": "5%"}, "measure.precision", "only used with repeats: auto"),
        ({"repeats": 3, "max_repeats": 9}, "measure.max_repeats", "only used with repeats: auto"),
    ],
)
def test_bad_precision_settings_name_the_field(measure, field, message):
    with pytest.raises(SpecError) as err:
        load_spec_text(yaml.safe_dump(SPEC | {"measure": measure}))
    assert err.value.field == field and message in str(err.value)


def test_precision_accepts_percent_and_fraction_and_auto_changes_the_digest():
    five = load_spec_text(yaml.safe_dump(SPEC | {"measure": {"repeats": "auto"}}))
    assert five.measure.adaptive and five.measure.precision == 0.05
    two = load_spec_text(yaml.safe_dump(SPEC | {"measure": {"repeats": "auto", "precision": 0.02}}))
    assert two.measure.precision == 0.02
    fixed = load_spec_text(yaml.safe_dump(SPEC | {"measure": {"repeats": 3}}))
    assert len({five.digest(), two.digest(), fixed.digest()}) == 3
    # sweeps with fixed repeats keep the digest they always had (their journals resume)
    assert "adaptive" not in repr(fixed.measure)


class CountingWrites:
    """Wraps a slab backend's open_writer to count every file written, timed or not."""

    def __init__(self, monkeypatch, backend: type[SlabBackend]) -> None:
        self.paths: list[str] = []
        original = backend.open_writer

        def counted(this, path, workload, params):
            self.paths.append(path.name)
            return original(this, path, workload, params)

        monkeypatch.setattr(backend, "open_writer", counted)


def test_the_warm_up_runs_once_per_backend_and_process_and_is_not_counted(tmp_path, monkeypatch):
    from iotune.backends.netcdf4.backend import NetCDF4Backend

    monkeypatch.setattr(trial, "_WARMED", set())
    writes = CountingWrites(monkeypatch, NetCDF4Backend)
    sweep = load_spec_text(yaml.safe_dump(SPEC))
    first, second = make_plan(sweep).trials
    for t in (first, second):
        task = TrialTask(t, sweep.workload, sweep.read, MeasureSpec(repeats=3), str(tmp_path))
        result = run_trial(task)
        assert result.status == "ok", result.error
        assert len(result.write) == 3 and len(result.reads["full"]) == 3
    assert writes.paths == ["warm-up.nc", "r0.nc", "r1.nc", "r2.nc", "r0.nc", "r1.nc", "r2.nc"]


def precise_after(columns, k: int, limit: float = 0.5) -> bool:
    """Whether the first ``k`` repeats of every metric are within ``limit``."""
    return all(precision.relative_half_width(c[:k].tolist()) <= limit for c in columns)


def test_intervals_and_repeat_counts_land_in_the_dataset(tmp_path):
    spec = tmp_path / "auto.yaml"
    measure = {"repeats": "auto", "precision": "50%", "max_repeats": 8}
    spec.write_text(yaml.safe_dump(SPEC | {"measure": measure}))
    api.run(spec, out=tmp_path / "out", progress=False)
    ds = xr.open_dataset(tmp_path / "out" / "results.nc")
    assert ds.attrs["repeats_mode"] == "auto" and ds.attrs["precision"] == 0.5
    assert ds.sizes["repeat"] == 8
    assert "order statistics" in ds.attrs["interval_method"] and "untimed" in ds.attrs["warmup"]
    for point in ds["repeats_used"].to_series().index:
        sel = dict(zip(ds["repeats_used"].dims, np.atleast_1d(point), strict=True))
        used = int(ds["repeats_used"].sel(sel))
        assert precision.MIN_AUTO_REPEATS <= used <= 8
        writes = ds["write_MiBps"].sel(sel).values
        assert np.isfinite(writes[:used]).all() and np.isnan(writes[used:]).all()
        low, high = precision.median_interval(writes[:used].tolist())
        assert float(ds["write_MiBps_ci_low"].sel(sel)) == low
        assert float(ds["write_MiBps_ci_high"].sel(sel)) == high
        stop = str(ds["repeats_stop"].sel(sel).values)
        reads = ds["read_MiBps"].sel(sel)
        columns = [writes] + [reads.sel(pattern=p).values for p in ds["pattern"].values]
        assert stop == ("precision" if precise_after(columns, used) else "max_repeats")
        if stop == "precision":  # it stopped at the first count that was precise enough
            assert used == precision.MIN_AUTO_REPEATS or not precise_after(columns, used - 1)
        else:
            assert used == 8


def test_a_search_stops_the_users_code_by_its_time_a_call() -> None:
    """The leader's scores are log calls a second when the goal ranks the user's code so."""
    from iotune.model.records import EarlyStop

    hopeless = precision.hopeless
    # few MiB/s (a compressed layout reads fewer bytes), but 100 calls a second
    result = TrialResult("a", "ok", reads={"mine": [{"MiBps": 1.0, "s": 0.01}] * 3})
    leader = tuple(math.log(v) for v in (49.0, 50.0, 51.0, 50.5))  # 50 calls (or MiB) a second
    weights = (("read:mine", 1.0),)
    assert not hopeless(result, EarlyStop(weights, leader, per_call=("read:mine",)))
    assert hopeless(result, EarlyStop(weights, leader))  # by MiB/s it would stop


def _writes(*mibps: float) -> TrialResult:
    return TrialResult("t", "ok", write=[{"MiBps": v, "s": 1.0} for v in mibps])


@pytest.mark.parametrize(
    ("repeats", "stops"),
    [
        ([50.0, 51.0], False),  # fewer repeats than the comparison trusts alone
        ([50.0, 51.0, 49.0], True),  # half the leader's speed: behind beyond noise
        ([95.0, 104.0, 99.0], False),  # the interval of the ratio holds 1: a tie
        ([150.0, 160.0, 155.0], False),  # ahead of the leader: never stopped
    ],
)
def test_an_early_stop_ends_a_trial_recommend_would_not_tie(repeats, stops) -> None:
    """The early stop and recommend's tie are one comparison: a trial stops exactly
    when gap_of puts its repeats behind the leader's beyond noise."""
    from iotune.measuring.ratio import gap_of
    from iotune.model.records import EarlyStop

    leader = [100.0, 98.0, 103.0, 101.0, 97.0]
    rule = EarlyStop((("write", 1.0),), tuple(math.log(v) for v in leader))
    assert precision.hopeless(_writes(*repeats), rule) is stops
    if len(repeats) >= rule.after:
        gap = gap_of(repeats, leader)
        assert stops == (gap.ratio < 1 and not gap.tied)
