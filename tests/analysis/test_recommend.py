"""Recommendations from a crafted results Dataset whose winner, runner-up and baseline are known."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from iotune.analysis.recommend import recommend
from iotune.analysis.report import render_text
from iotune.core.errors import RecommendError
from iotune.results.dataset import save

MiB = 2**20


@pytest.fixture
def ds(crafted_results) -> xr.Dataset:
    return crafted_results()


def test_known_winner_runner_up_and_baseline(ds: xr.Dataset) -> None:
    rec = recommend(ds, objective="read:timeseries")
    assert rec.winner.coords == {"chunks": "8x16x16", "codec": "zlib"}
    assert rec.runner_up is not None
    assert rec.runner_up.coords == {"chunks": "8x16x16", "codec": "none"}
    assert rec.baseline is not None
    assert rec.baseline.coords == {"chunks": "contiguous", "codec": "none"}
    assert rec.speedup["read:timeseries"] == pytest.approx(10.0)
    assert rec.winner.median["read:timeseries"] == pytest.approx(10.0)
    assert rec.winner.low["read:timeseries"] == pytest.approx(9.5)
    assert rec.winner.high["read:timeseries"] == pytest.approx(10.5)
    # 9.5 10 10.5 against 7.6 8 8.4: complete separation of 3 and 3, p = 1/20
    assert rec.separated is True
    assert rec.separation == (
        "the winner beats the runner-up (chunks=8x16x16 codec=none, 20.0% slower) beyond "
        "noise: one-sided Mann-Whitney p = 0.05 over 3 and 3 repeats"
    )
    assert rec.winner.separation is not None and rec.winner.p_value == pytest.approx(0.05)
    assert rec.candidates == 5  # the not-applicable point is no candidate


def test_overlapping_repeats_are_not_separable(crafted_results) -> None:
    ts = crafted_results.READ["timeseries"].copy()
    ts[1, 0] = 9.8  # runner-up 9.31 9.8 10.29 against the winner's 9.5 10 10.5
    rec = recommend(crafted_results(timeseries=ts), objective="read:timeseries")
    assert rec.winner.coords == {"chunks": "8x16x16", "codec": "zlib"}
    assert rec.separated is False
    assert rec.separation == (
        "the winner is not separable from the runner-up (chunks=8x16x16 codec=none, 2.0% "
        "slower): one-sided Mann-Whitney p = 0.35 over 3 and 3 repeats; measure more repeats "
        "(measure.repeats: auto)"
    )


def test_too_few_repeats_and_a_single_candidate(ds: xr.Dataset) -> None:
    rec = recommend(ds.isel(repeat=[0, 2]), objective="read:timeseries")
    assert rec.separated is None
    assert rec.separation.startswith("cannot tell whether the winner beats the runner-up")
    assert "too few repeats to tell (2 and 2)" in rec.separation
    strict = recommend(ds, objective="read:timeseries", alpha=0.01)
    assert strict.separated is None and "too few repeats to tell (3 and 3)" in strict.separation
    one = recommend(ds.isel(chunks=[1], codec=[0]), objective="write")
    assert one.runner_up is None and one.separated is None
    assert one.separation == "only one configuration met the constraints"


def test_weights_combine_metrics_by_geometric_mean(ds: xr.Dataset) -> None:
    # relative to each metric's best: 8x16x16/none is 0.8 and 0.8, the best balance
    rec = recommend(ds, weights="write=1,read:timeseries=1")
    assert rec.winner.coords == {"chunks": "8x16x16", "codec": "none"}
    assert rec.winner.score == pytest.approx(0.8)
    assert rec.weights == {"write": 1.0, "read:timeseries": 1.0}
    # weighting time series reads 5x makes the zlib variant win: 0.4 ** (1 / 6) > 0.8
    rec = recommend(ds, weights={"write": 1, "read:timeseries": 5})
    assert rec.winner.coords == {"chunks": "8x16x16", "codec": "zlib"}


def test_size_and_ratio_constraints(ds: xr.Dataset) -> None:
    assert recommend(ds, objective="write").winner.coords["codec"] == "none"
    small = recommend(ds, objective="write", max_size="512KiB")
    assert small.winner.coords == {"chunks": "1x64x64", "codec": "zlib"}
    assert small.runner_up is not None and small.runner_up.coords["codec"] == "zlib"
    assert small.constraints == {"max_size": 512 * 1024}
    ratio = recommend(ds, objective="write", max_ratio_loss=0.1)
    assert ratio.winner.coords == {"chunks": "1x64x64", "codec": "zlib"}
    loose = recommend(ds, objective="write", max_ratio_loss="0.7")
    assert loose.winner.coords == {"chunks": "contiguous", "codec": "none"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"objective": "read:diagonal"}, "--objective: 'read:diagonal' is not a metric.*read:full"),
        ({"weights": "write=fast"}, "--weights: 'write=fast'; allowed: METRIC=NUMBER"),
        ({"weights": "write=-1"}, "--weights: weight -1.0 of write; allowed: a number > 0"),
        ({"max_size": "12XB"}, "--max-size: .*'12XB'"),
        ({"max_size": "1KiB"}, "--max-size: no successful configuration is at most 1KiB"),
        ({"max_ratio_loss": 1.5}, "--max-ratio-loss: 1.5; allowed: a fraction from 0 to 1"),
        ({"objective": "write", "weights": "write=1"}, "give one, not both"),
    ],
)
def test_bad_input_names_the_field(ds: xr.Dataset, kwargs: dict, message: str) -> None:
    with pytest.raises(RecommendError, match=message):
        recommend(ds, **kwargs)


def test_no_successful_trial_is_an_error(ds: xr.Dataset) -> None:
    ds["status"][:] = "failed"
    with pytest.raises(RecommendError, match="no successful trial"):
        recommend(ds, objective="write")


def test_exports_describe_the_winner(ds: xr.Dataset) -> None:
    rec = recommend(ds, objective="read:timeseries")
    assert rec.exports["nccopy"]["value"] == [
        "nccopy",
        *("-c", "time/8,lat/16,lon/16", "-M", "0", "-d", "4", "-s"),
        *("in.nc", "out.nc"),
    ]
    encoding = rec.exports["xarray_netcdf4_encoding"]["value"]
    assert encoding == {
        "data": {"compression": "zlib", "complevel": 4, "shuffle": True, "chunksizes": [8, 16, 16]}
    }
    assert "var.set_var_chunk_cache(size=4194304)" in rec.exports["netcdf4_create_variable"]["text"]
    assert "lfs_setstripe" not in rec.exports and "mpich_mpiio_hints" not in rec.exports
    assert recommend(ds, objective="write", variable="tas").exports["h5repack"]["value"][1:5] == [
        *("-l", "tas:CONTI", "-f", "tas:NONE"),
    ]


def test_text_report_names_everything(ds: xr.Dataset) -> None:
    text = render_text(recommend(ds, objective="read:timeseries"))
    assert "winner:     chunks=8x16x16 codec=zlib" in text
    assert "runner-up:  chunks=8x16x16 codec=none" in text
    assert "baseline:   chunks=contiguous codec=none" in text
    assert "speedup over the baseline: read:timeseries 10.00x; stored size -60%" in text
    for title in ("xarray, netCDF4", "xarray, Zarr v3", "netCDF4-python", "nccopy", "h5repack"):
        assert title in text


def test_winner_that_is_the_baseline_says_so(ds: xr.Dataset) -> None:
    rec = recommend(ds, objective="read:full")
    assert rec.winner.coords == rec.baseline.coords == {"chunks": "contiguous", "codec": "none"}
    text = render_text(rec)
    assert "the winner is this baseline point itself: nothing to gain" in text


def test_mpi_hints_and_stripes_are_exported(crafted_results) -> None:
    hints = {"default": {}, "cb_off": {"romio_cb_write": "disable", "romio_cb_read": "disable"}}
    speed = np.array([50.0, 80.0])[:, None, None] * np.array([1.0, 1.5])[None, :, None]
    effective = np.array(
        [
            [json.dumps({"backend": "mpiio", "hints": h, "stripe_count": c, "stripe_size": MiB})]
            for h in hints
            for c in (4,)
        ]
    ).reshape(2, 1)
    ds = xr.Dataset(
        {
            "write_MiBps": (
                ("hints", "stripe_count", "repeat"),
                speed[:, :1] * crafted_results.SPREAD,
            ),
            "file_bytes": (("hints", "stripe_count"), np.full((2, 1), 1.0 * MiB)),
            "ratio": (("hints", "stripe_count"), np.ones((2, 1))),
            "status": (("hints", "stripe_count"), np.full((2, 1), "ok", dtype=object)),
            "effective": (("hints", "stripe_count"), effective),
        },
        coords={"hints": list(hints), "stripe_count": [4], "repeat": [0, 1, 2]},
        attrs={
            "swept": "hints",
            "hint_sets": json.dumps(hints),
            "workload": json.dumps({"shape": {"z": 8, "y": 8, "x": 8}, "dtype": "float64"}),
        },
    )
    rec = recommend(ds, objective="write")
    assert rec.winner.coords == {"hints": "cb_off"}
    assert rec.baseline is not None and rec.baseline.coords == {"hints": "default"}
    assert rec.speedup["write"] == pytest.approx(1.6)
    assert rec.exports["mpich_mpiio_hints"]["value"] == (
        "*:romio_cb_write=disable:romio_cb_read=disable"
    )
    assert rec.exports["romio_hints_file"]["value"] == (
        "romio_cb_write disable\nromio_cb_read disable\n"
    )
    assert rec.exports["lfs_setstripe"]["value"] == [
        "lfs",
        "setstripe",
        "-c",
        "4",
        "-S",
        "1M",
        "DIR",
    ]
    assert "nccopy" in rec.exports  # the mpiio backend writes netCDF-like arrays too


def run_cli(capsys: pytest.CaptureFixture, *args: object) -> tuple[int, str, str]:
    from iotune.cli.main import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_text_and_json(ds: xr.Dataset, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = save(ds, tmp_path / "results.nc")
    code, out, err = run_cli(capsys, "recommend", tmp_path, "--objective", "read:timeseries")
    assert code == 0, err
    assert "winner:     chunks=8x16x16 codec=zlib" in out
    assert "nccopy -c time/8,lat/16,lon/16 -M 0 -d 4 -s in.nc out.nc" in out
    code, out, err = run_cli(
        capsys, "recommend", path, "--weights", "write=1,read:timeseries=1", "--format", "json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["winner"]["coords"] == {"chunks": "8x16x16", "codec": "none"}
    assert data["baseline"]["label"] == "chunks=contiguous codec=none"
    assert data["exports"]["nccopy"]["value"][:3] == ["nccopy", "-c", "time/8,lat/16,lon/16"]


SIX = np.array([0.9, 0.95, 0.98, 1.02, 1.05, 1.1])


def six_repeats(ds: xr.Dataset) -> xr.Dataset:
    """Crafted results with six repeats around each median (0.9x to 1.1x) instead of three."""
    med = ds[["write_MiBps", "read_MiBps"]].isel(repeat=1, drop=True)  # SPREAD[1] is 1
    spread = xr.DataArray(SIX, dims="repeat", coords={"repeat": np.arange(SIX.size)})
    return ds.drop_dims("repeat").assign({n: med[n] * spread for n in med.data_vars})


def test_cli_says_whether_the_winner_beats_the_runner_up(
    crafted_results, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    clear = save(six_repeats(crafted_results()), tmp_path / "clear" / "results.nc")
    ts = crafted_results.READ["timeseries"].copy()
    ts[1, 0] = 9.8
    close = save(six_repeats(crafted_results(timeseries=ts)), tmp_path / "close" / "results.nc")
    beats = (
        "the winner beats the runner-up (chunks=8x16x16 codec=none, 20.0% slower) beyond "
        "noise: one-sided Mann-Whitney p = 0.0011 over 6 and 6 repeats"
    )
    code, out, err = run_cli(capsys, "recommend", clear, "--objective", "read:timeseries")
    assert code == 0, err
    assert f"\n  {beats}\n" in out
    code, out, err = run_cli(
        capsys, "recommend", clear, "--objective", "read:timeseries", "--format", "json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert (data["separated"], data["separation"]) == (True, beats)
    sep = data["winner"]["separation"]
    assert sep["p_value"] == pytest.approx(1 / 924)  # complete separation of 6 and 6
    assert sep["repeats"] == [6, 6] and sep["runner_up"] == "chunks=8x16x16 codec=none"
    assert sep["difference"] == pytest.approx(-0.2) and sep["quantity"] == "read:timeseries"
    assert data["runner_up"]["separation"] is None
    assert len(data["winner"]["repeats"]["read:timeseries"]) == 6
    code, out, err = run_cli(
        capsys, "recommend", close, "--objective", "read:timeseries", "--format", "json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["separated"] is False
    assert data["separation"] == (
        "the winner is not separable from the runner-up (chunks=8x16x16 codec=none, 2.0% "
        "slower): one-sided Mann-Whitney p = 0.35 over 6 and 6 repeats; measure more repeats "
        "(measure.repeats: auto)"
    )
    # weights: the combined score of each repeat; both scores follow the same repeats here
    code, out, err = run_cli(capsys, "recommend", clear, "--weights", "write=1,read:timeseries=3")
    assert code == 0, err
    # the leader by 0.6 % (codec none) and zlib cannot be told apart: the smaller file wins,
    # and the runner-up, the leader, is not called better than a winner said to beat it
    assert (
        "\n  the runner-up (chunks=8x16x16 codec=none) has the better median, score 0.6% "
        "higher, within noise: one-sided Mann-Whitney p = 0.35 over 6 and 6 repeats; the winner "
        "was picked for its 60% smaller stored file, within 5% of the fastest (tied)\n"
        "  2 configurations cannot be told apart (the 95% "
        "bootstrap interval of their ratio holds 1); picked the smallest stored size within 5% "
        "of the fastest, then the fewest settings changed from the baseline: the 60% smaller "
        "file, 1% slower [-10% to 10%]\n"
    ) in out


def test_cli_bad_input_is_one_line_and_exit_2(
    ds: xr.Dataset, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    save(ds, tmp_path / "results.nc")
    code, _out, err = run_cli(capsys, "recommend", tmp_path, "--max-ratio-loss", "lots")
    assert code == 2
    assert err.strip() == (
        "iotune: error: --max-ratio-loss: 'lots'; allowed: a fraction from 0 to 1 "
        "(0.1 accepts a compression ratio 10% below the best)"
    )
    assert "Traceback" not in err


def test_public_api_is_lazy() -> None:
    code = "import sys, iotune; iotune.recommend; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
