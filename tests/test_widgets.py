"""iotune.explore: the widgets drive the figure and the best-N table in place."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pytest

import iotune
from iotune.core.errors import UsageError
from iotune.results.dataset import save
from iotune.views.widgets import Explorer, explorable_dims, metrics


@pytest.fixture
def ds(fake_results):
    return fake_results({"parameters.chunk_cache": ["1MiB", "64MiB"]}, seed=3)


def visible_axes(ex: Explorer) -> list:
    return [ax for ax in ex.figure.axes if ax.get_visible()]


def test_defaults_show_write_throughput_by_chunks_and_codec(ds) -> None:
    ex = iotune.explore(ds)
    ax = visible_axes(ex)[0]
    assert ex.metric.value == "write_MiBps"
    assert ax.get_xlabel() == "chunks"
    assert ax.get_ylabel().startswith("median write throughput")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["16x16x16", "1x64x64"]
    assert [line.get_label() for line in ax.get_lines()] == ["none", "zlib"]
    assert bytes(ex.image.value).startswith(b"\x89PNG")
    assert "best 5 by median write_MiBps (highest)" in ex.table.value


def test_changing_the_metric_redraws_figure_and_table(ds) -> None:
    ex = iotune.explore(ds)
    png, table = ex.image.value, ex.table.value
    ex.metric.value = "read_MiBps"
    assert visible_axes(ex)[0].get_ylabel().startswith("median read throughput")
    assert ex.image.value != png
    assert ex.table.value != table
    assert "pattern=full" in ex.table.value
    # read throughput varies by pattern: its control appears among the fixed ones
    assert "pattern" in [c.description for c in ex._fixed_box.children]


def test_the_plotted_values_are_the_chosen_statistic_at_the_fixed_point(ds) -> None:
    ex = iotune.explore(ds, metric="read_MiBps")
    ex.fixed["pattern"].value = "timeseries"
    ex.fixed["chunk_cache"].value = 64 * 2**20
    for stat in ("median", "min", "max", "mean"):
        ex.stat.value = stat
        line = visible_axes(ex)[0].get_lines()[1]  # codec=zlib
        expected = getattr(ds["read_MiBps"], stat)("repeat").sel(
            codec="zlib", pattern="timeseries", chunk_cache=64 * 2**20
        )
        np.testing.assert_allclose(line.get_ydata(), expected.values)
        assert visible_axes(ex)[0].get_ylabel().startswith(f"{stat} read throughput")
        assert "chunk_cache=64MiB" in ex.figure.get_suptitle()


def test_facets_make_one_panel_per_value(ds) -> None:
    ex = iotune.explore(ds, metric="read_MiBps")
    ex.facet.value = "pattern"
    titles = [ax.get_title() for ax in visible_axes(ex)]
    assert titles == ["pattern=full", "pattern=spatial", "pattern=timeseries"]
    assert "pattern" not in [c.description for c in ex._fixed_box.children]


def test_one_role_per_dimension(ds) -> None:
    ex = iotune.explore(ds)
    ex.hue.value = "chunks"  # chunks was x: x moves to a free dimension
    assert (ex.x.value, ex.hue.value) == ("codec", "chunks")
    ex.facet.value = "chunks"  # taken from hue
    assert (ex.hue.value, ex.facet.value) == ("", "chunks")
    ex.x.value = "chunks"  # taken from facets
    assert (ex.x.value, ex.facet.value) == ("chunks", "")
    assert visible_axes(ex)[0].get_xlabel() == "chunks"
    assert visible_axes(ex)[0].get_legend_handles_labels() == ([], [])


def test_byte_dimensions_are_labelled_as_sizes(ds) -> None:
    ex = iotune.explore(ds)
    ex.x.value = "chunk_cache"
    labels = [t.get_text() for t in visible_axes(ex)[0].get_xticklabels()]
    assert labels == ["1MiB", "64MiB"]
    assert type(ex.fixed["chunk_cache"]).__name__ == "SelectionSlider"


def test_best_table_ranks_all_points_and_follows_top_n(ds) -> None:
    ex = iotune.explore(ds, top=3)
    rows = ex.best()
    assert len(rows) == 3
    med = ds["write_MiBps"].median("repeat")
    assert rows[0]["write_MiBps"] == pytest.approx(float(med.max()))
    assert [r["write_MiBps"] for r in rows] == sorted(
        (r["write_MiBps"] for r in rows), reverse=True
    )
    ex.top.value = 6
    assert ex.table.value.count("<tr>") == 7  # header and six rows


def test_seconds_and_bytes_rank_lowest_first(ds) -> None:
    ex = iotune.explore(ds, metric="file_bytes")
    assert "(lowest)" in ex.table.value
    assert ex.best()[0]["file_bytes"] == pytest.approx(float(ds["file_bytes"].min()))


def test_failed_points_are_gaps_not_zeros(ds) -> None:
    ds["status"].loc[{"codec": "zlib"}] = "failed"
    ds["write_MiBps"].loc[{"codec": "zlib"}] = np.nan
    ex = iotune.explore(ds)
    assert np.isnan(visible_axes(ex)[0].get_lines()[1].get_ydata()).all()
    assert all(row["codec"] == "none" for row in ex.best())


def test_metrics_and_dims_offered(ds) -> None:
    names = metrics(ds)
    assert names[:2] == ["write_MiBps", "read_MiBps"]
    assert "ratio" in names and "status" not in names
    assert "write_cpu_s" not in names  # all NaN here: nothing to show
    assert explorable_dims(ds) == ["chunks", "codec", "chunk_cache", "pattern"]


def test_opens_a_results_file(ds, tmp_path: Path) -> None:
    save(ds, tmp_path / "results.nc")
    ex = iotune.explore(tmp_path, metric="ratio")
    assert visible_axes(ex)[0].get_ylabel().startswith("median compression ratio")


def test_unknown_metric_is_a_usage_error(ds) -> None:
    with pytest.raises(UsageError, match=r"metric 'speed' is not allowed; allowed: \["):
        iotune.explore(ds, metric="speed")


def test_displays_as_a_widget(ds) -> None:
    bundle = iotune.explore(ds)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


WINNER = {"chunks": "16x16x16", "codec": "none", "chunk_cache": 64 * 2**20}
RUNNER = {"chunks": "1x64x64", "codec": "zlib", "chunk_cache": 2**20}


@pytest.fixture
def six(fake_results):
    """Six repeats; write throughput of WINNER and RUNNER set, every other point far slower."""
    ds = fake_results({"parameters.chunk_cache": ["1MiB", "64MiB"], "measure.repeats": 6}, seed=4)
    ds["write_MiBps"][:] = np.arange(6.0)  # 0 to 5 MiB/s
    ds["write_MiBps"].loc[WINNER] = [100, 104, 98, 102, 101, 103]
    ds["write_MiBps"].loc[RUNNER] = [90, 92, 91, 89, 93, 88]
    return ds


def test_the_table_says_whether_the_best_beats_the_runner_up(six) -> None:
    ex = iotune.explore(six)
    sep = ex.separation()
    assert sep is not None and sep.beats is True
    assert sep.p_value == pytest.approx(1 / 924)  # complete separation of 6 and 6
    assert sep.text == (
        "the winner beats the runner-up (chunks=1x64x64 codec=zlib chunk_cache=1MiB, 10.8% "
        "slower) beyond noise: one-sided Mann-Whitney p = 0.0011 over 6 and 6 repeats"
    )
    assert "<p class='iotune-separation'>" + html.escape(sep.text) + "</p>" in ex.table.value
    # as iotune recommend says it
    assert six.iotune.best("write").separation.text == sep.text
    six["write_MiBps"].loc[RUNNER] = [103, 97, 101, 104, 99, 100]  # interleaved now
    ex.update()
    assert ex.separation().beats is False
    assert "the winner is not separable from the runner-up (chunks=1x64x64" in ex.table.value
    assert "measure more repeats (measure.repeats: auto)" in ex.table.value


def test_the_separation_follows_the_metric_and_its_direction(six) -> None:
    six["write_s"][:] = 50.0 + np.arange(6.0)
    six["write_s"].loc[WINNER] = [1.0, 1.1, 1.2, 1.05, 1.15, 1.12]  # seconds: lowest wins
    six["write_s"].loc[RUNNER] = [2.0, 2.1, 2.2, 2.05, 2.15, 2.12]
    ex = iotune.explore(six, metric="write_s")
    sep = ex.separation()
    assert sep.beats is True and sep.unit == "s"
    assert "(chunks=1x64x64 codec=zlib chunk_cache=1MiB, 90.1% slower) beyond noise" in sep.text
    ex.metric.value = "read_MiBps"
    ex.fixed["pattern"].value = "timeseries"
    sep = ex.separation()
    rows = ex.best()
    assert sep.quantity == "read_MiBps" and sep.repeats == (6, 6)
    assert sep.runner_up == " ".join(
        f"{d}={rows[1][d]}" for d in ("chunks", "codec", "chunk_cache")
    )
    ex.metric.value = "file_bytes"  # no repeats: nothing to test
    assert ex.separation() is None
    assert "iotune-separation" not in ex.table.value


def test_the_separation_reports_confidence_intervals(six) -> None:
    for end, winner, runner in (("low", 99.0, 89.0), ("high", 103.0, 100.0)):
        six[f"write_MiBps_ci_{end}"].loc[WINNER] = winner
        six[f"write_MiBps_ci_{end}"].loc[RUNNER] = runner
    sep = iotune.explore(six).separation()
    assert sep.intervals_overlap == {"write_MiBps": True}
    assert sep.beats is True  # the rank test decides
    assert sep.text.endswith("; their confidence intervals of the median overlap")
