"""ds.iotune: the one way to read results back, on real and crafted results."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml

from iotune.analysis.recommend import recommend
from iotune.app import api
from iotune.core.errors import RecommendError, ResultsError, UsageError
from iotune.results.accessor import label, value_label
from iotune.results.dataset import open_results
from iotune.results.objective import parse_weights


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> xr.Dataset:
    """A real memory-backend sweep, saved and opened again: codec x level, three repeats."""
    tmp = tmp_path_factory.mktemp("accessor")
    spec = tmp / "memory.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "name": "accessor",
                "workload": {"shape": {"time": 8, "y": 64, "x": 64}, "dtype": "int16"},
                "backend": "memory",
                "parameters": {"chunks": [8, 32, 32], "codec": ["none", "zlib"], "level": [1, 9]},
                "read": {"patterns": ["full", "timeseries"], "timeseries": {"pixels": 4}},
                "measure": {"repeats": 3},
            }
        )
    )
    api.run(spec, out=tmp / "out", progress=False)
    return open_results(tmp / "out")


# --- attributes ---------------------------------------------------------------


def test_real_results_read_back(real: xr.Dataset) -> None:
    acc = real.iotune
    assert acc.swept == ("codec", "level")
    assert acc.patterns == ("full", "timeseries")
    assert acc.metrics == ("write", "read:full", "read:timeseries")
    assert acc.backends == ("memory",)
    assert acc.fixed == {"chunks": "8x32x32"}
    assert acc.workload["shape"] == {"time": 8, "y": 64, "x": 64}
    assert "name: accessor" in acc.spec
    assert acc.provenance["host"] == real.attrs["provenance_host"]
    assert all(f"provenance_{k}" in real.attrs for k in acc.provenance)
    assert acc.counts() == {"ok": 3, "not_applicable": 1}


def test_swept_keeps_the_attribute_order_and_only_dims(fake_results) -> None:
    ds = fake_results({"parameters.chunk_cache": ["1MiB", "64MiB"]})
    assert ds.iotune.swept == ("chunks", "codec", "chunk_cache")
    assert ds.assign_attrs(swept="codec chunks").iotune.swept == ("codec", "chunks")
    # a selected parameter is no longer a dimension
    assert ds.sel(codec="zlib").iotune.swept == ("chunks", "chunk_cache")
    assert ds.assign_attrs(swept="").iotune.swept == ()
    # without the attribute (a Dataset built by hand): every dim but pattern/repeat/metric
    bare = ds.copy()
    bare.attrs = {}
    assert bare.iotune.swept == ("chunks", "codec", "chunk_cache")


# --- medians ------------------------------------------------------------------


def nanmedian(values: np.ndarray, axis: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices
        return np.nanmedian(values, axis=axis)


def test_median_equals_numpys_nanmedian_over_repeat(fake_results) -> None:
    ds = fake_results({"measure.repeats": 3}, seed=5)
    assert ds["write_MiBps"].dims == ("chunks", "codec", "chunk_cache", "repeat")
    write = ds["write_MiBps"].values.copy()
    write[0, 0, 0, 1] = np.nan  # one repeat missing: median of the other two
    write[1, 1, 1, :] = np.nan  # all missing: NaN
    ds["write_MiBps"] = ds["write_MiBps"].copy(data=write)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no all-NaN warning
        med = ds.iotune.median("write_MiBps")
    assert med.dims == ("chunks", "codec", "chunk_cache")
    np.testing.assert_array_equal(med.values, nanmedian(write, axis=-1))
    assert med.values[0, 0, 0] == (write[0, 0, 0, 0] + write[0, 0, 0, 2]) / 2
    assert np.isnan(med.values[1, 1, 1])
    assert med.attrs["units"] == "MiB/s"
    read = ds.iotune.median("read:spatial")
    expected = nanmedian(ds["read_MiBps"].sel(pattern="spatial").values, axis=-1)
    np.testing.assert_array_equal(read.values, expected)


def test_median_of_every_numeric_variable(real: xr.Dataset) -> None:
    med = real.iotune.median()
    assert "repeat" not in med.dims
    assert "status" not in med and "read_cache" not in med  # text has no median
    np.testing.assert_array_equal(med["ratio"].values, real["ratio"].values)
    for name in ("write_MiBps", "read_MiBps", "read_s"):
        axis = real[name].get_axis_num("repeat")
        np.testing.assert_array_equal(med[name].values, nanmedian(real[name].values, axis))
    with pytest.raises(ResultsError, match="not numeric"):
        real.iotune.median("status")


def test_spread_is_median_min_and_max(product_results) -> None:
    ds = product_results()  # repeats are 0.9x and 1.1x the value
    med, lo, hi = ds.iotune.spread("write")
    point = {"chunks": "64x32x32", "codec": "none", "chunk_cache": 64 * 2**20}
    assert float(med.sel(point)) == pytest.approx(360.0)
    assert float(lo.sel(point)) == pytest.approx(0.9 * 360.0)
    assert float(hi.sel(point)) == pytest.approx(1.1 * 360.0)
    da_med, *_ = ds["write_MiBps"].iotune.spread()
    xr.testing.assert_identical(da_med, med)


# --- the best point -------------------------------------------------------------


@pytest.mark.parametrize(
    ("objective", "kwargs", "winner"),
    [
        ("read:timeseries", {}, {"chunks": "8x16x16", "codec": "zlib"}),
        ("read:full", {}, {"chunks": "contiguous", "codec": "none"}),
        ("write", {}, {"chunks": "contiguous", "codec": "none"}),
        ("write", {"max_size": "512KiB"}, {"chunks": "1x64x64", "codec": "zlib"}),
        ("write", {"max_ratio_loss": 0.1}, {"chunks": "1x64x64", "codec": "zlib"}),
        ("write=1,read:timeseries=1", {}, {"chunks": "8x16x16", "codec": "none"}),
        ({"write": 1, "read:timeseries": 5}, {}, {"chunks": "8x16x16", "codec": "zlib"}),
        (None, {"weights": "write=1,read:timeseries=1"}, {"chunks": "8x16x16", "codec": "none"}),
        (None, {}, {"chunks": "8x16x16", "codec": "zlib"}),  # default: read:timeseries
    ],
)
def test_best_picks_the_known_winner(objective, kwargs, winner, crafted_results) -> None:
    best = crafted_results().iotune.best(objective, **kwargs)
    assert best.coords == winner
    assert best.label == " ".join(f"{k}={v}" for k, v in winner.items())


def test_best_reports_the_winners_figures(crafted_results, product_results) -> None:
    best = crafted_results().iotune.best("read:timeseries")
    assert best.median == {"read:timeseries": pytest.approx(10.0)}
    assert best.low["read:timeseries"] == pytest.approx(9.5)
    assert best.high["read:timeseries"] == pytest.approx(10.5)
    assert best.score == pytest.approx(1.0)
    assert best.file_bytes == pytest.approx(0.4 * 2**20)
    assert best.settings["codec"] == "zlib" and best.settings["level"] == 4
    best = product_results().iotune.best("write")
    assert best.coords == {"chunks": "64x32x32", "codec": "none", "chunk_cache": 64 * 2**20}
    assert best.label == "chunks=64x32x32 codec=none chunk_cache=64MiB"


def test_rank_and_recommend_agree(crafted_results) -> None:
    ds = crafted_results()
    ranking = ds.iotune.rank("write", max_size="512KiB")
    assert ranking.objective.weights == {"write": 1.0}
    assert ranking.objective.limits == {"max_size": 512 * 1024}
    assert len(ranking.candidates) == 5 and len(ranking.ranked) == 2
    assert [c.score for c in ranking.ranked] == sorted(
        (c.score for c in ranking.ranked), reverse=True
    )
    rec = recommend(ds, objective="write", max_size="512KiB")
    assert rec.winner == ranking.best
    assert rec.runner_up == ranking.ranked[1]


def test_best_on_a_real_sweep(real: xr.Dataset) -> None:
    rows = real.iotune.points()
    fastest = max(rows, key=lambda r: r["write"])
    best = real.iotune.best("write")
    assert best.median["write"] == pytest.approx(fastest["write"])
    assert best.separation is not None and best.separation.repeats == (3, 3)
    assert best.separation.beats in (True, False)  # 3 and 3 can tell at 0.05
    # only the smallest file fits: the size limit decides, whatever the timings
    smallest = min(rows, key=lambda r: r["file_bytes"])
    best = real.iotune.best("write", max_size=int(smallest["file_bytes"]))
    assert best.coords == {"codec": smallest["codec"], "level": smallest["level"]}
    assert best.coords == {"codec": "zlib", "level": 9}


@pytest.mark.parametrize(
    ("objective", "kwargs", "message"),
    [
        ("read:diagonal", {}, "'read:diagonal' is not a metric of these results"),
        ("write=fast", {}, "--weights: 'write=fast'"),
        ("write", {"max_size": "1KiB"}, "no successful configuration is at most 1KiB"),
        ("write", {"weights": "write=1"}, "give one, not both"),
    ],
)
def test_bad_objectives_are_usage_errors(objective, kwargs, message, crafted_results) -> None:
    with pytest.raises(RecommendError, match=message) as err:
        crafted_results().iotune.best(objective, **kwargs)
    assert isinstance(err.value, UsageError) and isinstance(err.value, RecommendError)


def test_parse_weights() -> None:
    assert parse_weights("write=1, read:spatial=2.5") == {"write": 1.0, "read:spatial": 2.5}


# --- the winner against the runner-up ------------------------------------------------


def two_configs(
    winner: list[float], runner: list[float], ci: dict[str, tuple[float, float]] | None = None
) -> xr.Dataset:
    """Write throughput of chunks=small (the winner) and chunks=large, repeats padded with
    NaN (as adaptive repeats leave them); ``ci`` adds write_MiBps_ci_low/_ci_high per chunks.
    """
    nrep = max(len(winner), len(runner))
    rows = [[*v, *[np.nan] * (nrep - len(v))] for v in (winner, runner)]
    ds = xr.Dataset(
        {
            "write_MiBps": (("chunks", "repeat"), np.array(rows), {"units": "MiB/s"}),
            "file_bytes": ("chunks", [2.0**20, 2.0**20]),
            "ratio": ("chunks", [1.0, 1.0]),
            "status": ("chunks", np.array(["ok", "ok"], dtype=object)),
        },
        coords={"chunks": ["small", "large"], "repeat": np.arange(nrep)},
        attrs={"swept": "chunks"},
    )
    if ci is not None:
        for end, k in (("low", 0), ("high", 1)):
            ds[f"write_MiBps_ci_{end}"] = ("chunks", [ci["small"][k], ci["large"][k]])
    return ds


def test_best_beats_the_runner_up_beyond_noise() -> None:
    ds = two_configs([100, 104, 98, 102, 101, 103], [90, 92, 91, 89, 93, 88])
    best = ds.iotune.best("write")
    assert best.label == "chunks=small"
    assert best.beats_runner_up is True
    assert best.p_value == pytest.approx(1 / 924)  # complete separation of 6 and 6
    sep = best.separation
    assert (sep.runner_up, sep.quantity, sep.unit, sep.repeats) == (
        "chunks=large",
        "write",
        "MiB/s",
        (6, 6),
    )
    assert sep.shift == 11  # the 18th and 19th of the 36 differences x - y
    assert sep.difference == pytest.approx(90.5 / 101.5 - 1)
    assert sep.text == (
        "the winner beats the runner-up (chunks=large, 10.8% slower) beyond noise: "
        "one-sided Mann-Whitney p = 0.0011 over 6 and 6 repeats"
    )
    assert best.repeats == {"write": [100, 104, 98, 102, 101, 103]}


def test_overlapping_repeats_are_not_separable() -> None:
    # medians 99.5 and 99, repeats interleaved
    ds = two_configs([100, 96, 103, 99, 101, 97], [98, 95, 102, 100, 94, 99, 101])
    best = ds.iotune.best("write")
    assert best.beats_runner_up is False
    assert best.p_value == pytest.approx(0.3304, abs=1e-4)  # by enumeration of 1716 splits
    assert best.separation.repeats == (6, 7)
    assert best.separation.text == (
        "the winner is not separable from the runner-up (chunks=large, 0.5% slower): "
        "one-sided Mann-Whitney p = 0.33 over 6 and 7 repeats; "
        "measure more repeats (measure.repeats: auto)"
    )


def test_nan_repeats_count_as_not_measured() -> None:
    ds = two_configs([100, 101, 102, 103, 104, 105], [90, 91, 92])
    sep = ds.iotune.best("write").separation
    assert sep.repeats == (6, 3)
    assert sep.p_value == pytest.approx(1 / 84)  # comb(9, 3)
    assert sep.beats is True


def test_confidence_intervals_are_reported_but_do_not_decide() -> None:
    winner, runner = [100, 104, 98, 102, 101, 103], [90, 92, 91, 89, 93, 88]
    overlap = two_configs(winner, runner, ci={"small": (97.0, 104.0), "large": (88.0, 99.0)})
    best = overlap.iotune.best("write")
    assert best.ci == {"write": (97.0, 104.0)}
    assert best.separation.intervals_overlap == {"write": True}
    assert best.beats_runner_up is True  # the rank test's verdict
    assert best.separation.text.endswith(
        "over 6 and 6 repeats; their confidence intervals of the median overlap"
    )
    apart = two_configs(winner, runner, ci={"small": (99.0, 104.0), "large": (88.0, 93.0)})
    assert apart.iotune.best("write").separation.intervals_overlap == {"write": False}
    # an interval missing (NaN) at one point: nothing to compare
    missing = two_configs(winner, runner, ci={"small": (99.0, 104.0), "large": (np.nan, np.nan)})
    assert missing.iotune.best("write").separation.intervals_overlap == {}
    # older results have no interval variables at all
    assert two_configs(winner, runner).iotune.best("write").separation.intervals_overlap == {}


def test_crafted_winner_separation_per_metric_and_score(crafted_results) -> None:
    ranking = crafted_results().iotune.rank("read:timeseries")
    sep = ranking.separation
    assert sep is ranking.best.separation and ranking.ranked[1].separation is None
    # 9.5 10 10.5 against 7.6 8 8.4: complete separation of 3 and 3
    assert sep.beats is True and sep.p_value == pytest.approx(0.05)
    assert sep.runner_up == "chunks=8x16x16 codec=none"
    ts = crafted_results.READ["timeseries"].copy()
    ts[1, 0] = 9.8  # runner-up 9.31 9.8 10.29: U = 6 of 9
    loose = crafted_results(timeseries=ts).iotune.best("read:timeseries")
    assert loose.beats_runner_up is False and loose.p_value == pytest.approx(7 / 20)
    # weights: the combined score of each repeat (every metric of a repeat moves alike here)
    best = crafted_results().iotune.best("write=1,read:timeseries=1")
    assert best.repeat_scores == pytest.approx(list(0.8 * crafted_results.SPREAD))
    assert best.separation.quantity == "score" and best.separation.unit == "1"
    assert best.separation.runner_up == "chunks=8x16x16 codec=zlib"
    assert "(chunks=8x16x16 codec=zlib, score 20.9% lower) beyond noise" in best.separation.text


def test_alpha_too_few_repeats_and_no_runner_up(crafted_results) -> None:
    ds = crafted_results()
    strict = ds.iotune.best("read:timeseries", alpha=0.01)  # 3 and 3 cannot reach 0.01
    assert strict.beats_runner_up is None and strict.p_value == pytest.approx(0.05)
    assert "too few repeats to tell (3 and 3)" in strict.separation.text
    two = ds.isel(repeat=[0, 2]).iotune.best("read:timeseries")
    assert two.beats_runner_up is None
    assert "too few repeats to tell (2 and 2)" in two.separation.text
    assert ds.iotune.rank("write", max_size="512KiB").separation.runner_up == (
        "chunks=8x16x16 codec=zlib"
    )
    single = ds.isel(chunks=0, codec=0).iotune.rank("write")
    assert single.separation is None and single.best.beats_runner_up is None
    with pytest.raises(RecommendError, match="alpha: 2; allowed: a significance level"):
        ds.iotune.best("write", alpha=2)


# --- grid points ------------------------------------------------------------------


def test_points_of_a_real_sweep(real: xr.Dataset) -> None:
    rows = real.iotune.points()
    assert [(r["codec"], r["level"]) for r in rows] == [("none", 1), ("zlib", 1), ("zlib", 9)]
    columns = ["codec", "level", "write", "read:full", "read:timeseries"]
    assert list(rows[0]) == [*columns, "file_bytes", "ratio", "status", "error"]
    for row in rows:
        point = real.sel(codec=row["codec"], level=row["level"])
        assert row["status"] == "ok" and row["error"] == ""
        assert type(row["level"]) is int and type(row["write"]) is float
        assert row["write"] == float(np.median(point["write_MiBps"].values))
        full = point["read_MiBps"].sel(pattern="full").values
        assert row["read:full"] == float(np.median(full))
        assert row["file_bytes"] == float(point["file_bytes"])
    every = real.iotune.points(include_not_applicable=True)
    assert len(every) == 4
    (skipped,) = [r for r in every if r["status"] == "not_applicable"]
    assert (skipped["codec"], skipped["level"]) == ("none", 9)
    assert np.isnan(skipped["write"]) and "level does not apply" in skipped["error"]


def test_points_as_a_data_frame(crafted_results) -> None:
    ds = crafted_results()
    frame = ds.iotune.points(frame=True)
    assert isinstance(frame, pd.DataFrame)
    assert len(frame) == 5  # contiguous/zlib is not applicable
    assert list(frame.columns[:3]) == ["chunks", "codec", "write"]
    best = frame.loc[frame["read:timeseries"].idxmax()]
    assert (best["chunks"], best["codec"]) == ("8x16x16", "zlib")
    assert frame["read:timeseries"].max() == pytest.approx(10.0)


def test_points_of_a_single_configuration(crafted_results) -> None:
    one = crafted_results().isel(chunks=0, codec=0)
    rows = one.iotune.points()
    assert one.iotune.swept == ()
    assert len(rows) == 1 and rows[0]["write"] == pytest.approx(100.0)
    assert one.iotune.best("write").label == "(single configuration)"


def test_a_fixed_parameter_kept_as_a_dimension_is_dropped(crafted_results) -> None:
    ds = crafted_results().expand_dims(chunk_cache=[4 * 2**20])
    assert ds.iotune.swept == ("chunks", "codec")
    assert len(ds.iotune.points()) == 5
    assert ds.iotune.best("read:timeseries").coords == {"chunks": "8x16x16", "codec": "zlib"}
    with pytest.raises(ResultsError, match=r"vary along \['chunk_cache'\]"):
        crafted_results().expand_dims(chunk_cache=[1, 2]).iotune.points()


def test_coords_settings_and_labels_of_a_point(product_results, crafted_results) -> None:
    ds = product_results()
    point = ds.isel(chunks=2, codec=1, chunk_cache=1)
    coords = ds.iotune.coords_of(point)
    assert coords == {"chunks": "64x32x32", "codec": "zlib", "chunk_cache": 64 * 2**20}
    assert type(coords["chunk_cache"]) is int
    assert label(coords) == "chunks=64x32x32 codec=zlib chunk_cache=64MiB"
    assert value_label("stripe_size", np.int64(2**20)) == "1MiB"
    assert value_label("level", np.int64(5)) == "5"
    # no effective JSON: the coordinates and the fixed parameters
    settings = ds.assign_attrs(fixed_parameters='{"level": 4}', backends="netcdf4").iotune
    assert settings.settings_of(point) == {"level": 4, "backend": "netcdf4", **coords}
    real_point = crafted_results().isel(chunks=1, codec=1)
    assert crafted_results().iotune.settings_of(real_point)["shuffle"] == "byte"


def test_results_without_hint_sets(crafted_results) -> None:
    assert crafted_results().iotune.hint_sets == {}
    assert crafted_results().assign_attrs(hint_sets="not json").iotune.hint_sets == {}


# --- registration -------------------------------------------------------------------


def test_import_iotune_registers_the_accessor(tmp_path: Path, crafted_results) -> None:
    path = tmp_path / "results.nc"
    crafted_results().to_netcdf(path)
    code = (
        "import sys, iotune\n"
        "heavy = {'matplotlib', 'dask', 'ipywidgets'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
        "import xarray as xr\n"
        f"ds = xr.open_dataset({str(path)!r})\n"
        "assert ds.iotune.swept == ('chunks', 'codec'), ds.iotune.swept\n"
        "assert ds.iotune.best('write').coords == {'chunks': 'contiguous', 'codec': 'none'}\n"
        "assert ds['write_MiBps'].iotune.median().dims == ('chunks', 'codec')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
