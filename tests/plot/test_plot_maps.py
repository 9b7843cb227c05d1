"""Heatmaps faceted by pattern, and throughput as a fraction of the device limit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from matplotlib.collections import PathCollection
from matplotlib.image import AxesImage

from iotune.core.errors import ResultsError
from iotune.plot import all_figures, fraction_of_limit, heatmap, notes
from iotune.results.limit import attach_limit
from tests.plot.figures import legends

LIMIT = {"write_MiBps": 400.0, "read_MiBps": 800.0}


@pytest.fixture
def ds(product_results) -> xr.Dataset:
    return product_results()


def image(ax) -> np.ma.MaskedArray:
    (img,) = [a for a in ax.get_images() if isinstance(a, AxesImage)]
    return img.get_array()


def data_axes(fig) -> list:
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def colorbars(fig) -> list:
    return [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]


def test_read_heatmap_has_a_panel_per_pattern(ds: xr.Dataset, product_results) -> None:
    fig = heatmap(ds)
    axes = data_axes(fig)
    assert [ax.get_title() for ax in axes] == [
        f"read: {p} pattern" for p in product_results.PATTERNS
    ]
    for ax in axes:
        assert ax.get_xlabel() == "chunks" and ax.get_ylabel() == "codec"
        assert [t.get_text() for t in ax.get_xticklabels()] == product_results.CHUNKS
        assert [t.get_text() for t in ax.get_yticklabels()] == product_results.CODECS
    assert len(colorbars(fig)) == len(product_results.PATTERNS)
    for bar in colorbars(fig):
        assert bar.get_ylabel() == "median read throughput (MiB/s)"
    assert "best over chunk_cache" in fig.get_suptitle()


def test_heatmap_cells_are_the_best_medians(ds: xr.Dataset, product_results) -> None:
    fig = heatmap(ds)
    full = image(data_axes(fig)[0])
    # rows codec, columns chunks; best over chunk_cache is the 64MiB cache (x1.2)
    assert full.shape == (len(product_results.CODECS), len(product_results.CHUNKS))
    assert full[0, 2] == pytest.approx(300.0 * 1.0 * 1.2 * product_results.PATTERN_SPEED[0])
    assert full[1, 0] == pytest.approx(100.0 * 0.3 * 1.2 * product_results.PATTERN_SPEED[0])
    median = image(data_axes(heatmap(ds, reduce="median"))[0])
    # contiguous / zstd failed at 1MiB, so its median over caches is the 64MiB value
    assert median[3, 0] == pytest.approx(100.0 * 0.5 * 1.2 * 2.0)
    assert median[0, 0] == pytest.approx(100.0 * 1.1 * 2.0)
    assert any(t.get_text() == "720" for t in data_axes(fig)[0].texts)  # annotated values


def test_empty_cells_stay_blank(ds: xr.Dataset) -> None:
    ds["read_MiBps"].loc[{"chunks": "auto", "codec": "zlib"}] = np.nan
    cells = image(data_axes(heatmap(ds))[1])
    assert cells.mask[1, 1]
    assert not cells.mask[0, 1]


def test_write_heatmap_and_chosen_axes(ds: xr.Dataset) -> None:
    fig = heatmap(ds, metric="write", x="chunk_cache", y="chunks")
    (ax,) = data_axes(fig)
    assert ax.get_title() == "write"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1MiB", "64MiB"]
    assert ax.get_ylabel() == "chunks"
    assert colorbars(fig)[0].get_ylabel() == "median write throughput (MiB/s)"
    assert "best over codec" in fig.get_suptitle()


def test_heatmap_refuses_bad_requests(ds: xr.Dataset) -> None:
    with pytest.raises(ResultsError, match="not a swept parameter"):
        heatmap(ds, x="level")
    with pytest.raises(ResultsError, match="differ"):
        heatmap(ds, x="codec", y="codec")
    with pytest.raises(ResultsError, match="reduce"):
        heatmap(ds, reduce="mean")
    with pytest.raises(ResultsError, match="metric"):
        heatmap(ds, metric="latency")
    single = ds.sel(chunks="auto", codec="zlib", chunk_cache=2**20, drop=True)
    with pytest.raises(ResultsError, match="nothing was swept"):
        heatmap(single.assign_attrs(swept=""))


def test_one_swept_parameter_is_one_row(ds: xr.Dataset, product_results) -> None:
    one = ds.sel(chunks="auto", chunk_cache=2**20, drop=True).assign_attrs(swept="codec")
    ax = data_axes(heatmap(one, metric="write"))[0]
    assert image(ax).shape == (1, len(product_results.CODECS))
    assert ax.get_xlabel() == "codec"


def test_fraction_of_limit_figure(ds: xr.Dataset, product_results) -> None:
    fig = fraction_of_limit(attach_limit(ds, LIMIT))
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "write",
        *(f"read:{p}" for p in product_results.PATTERNS),
    ]
    assert ax.get_ylabel() == "throughput / device limit (1 = calibrated bandwidth)"
    assert ax.get_xlabel() == "operation"
    (limit_line,) = [line for line in ax.get_lines() if "device limit" in line.get_label()]
    assert set(limit_line.get_ydata()) == {1.0}
    assert "write 400 MiB/s, cold read 800 MiB/s" in fig.get_suptitle()
    # 23 successful points per column; the best write: 360 MiB/s of 400
    columns = [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)]
    assert [len(c) for c in columns] == [23] * 4
    assert max(columns[0][:, 1]) == pytest.approx(360.0 / 400.0)
    assert max(columns[3][:, 1]) == pytest.approx(360.0 * 0.5 / 800.0)
    assert all(-0.5 < x < 0.5 for x in columns[0][:, 0])
    assert legends(fig)[0].get_title().get_text() == "codec"
    assert len(legends(fig)[0].get_texts()) == len(product_results.CODECS)


def test_without_a_limit_the_figure_is_skipped_with_a_note(ds: xr.Dataset) -> None:
    assert "fraction-of-limit" not in all_figures(ds)
    (note,) = notes(ds)
    assert "iotune calibrate" in note
    with pytest.raises(ResultsError, match="iotune calibrate"):
        fraction_of_limit(ds)
    limited = attach_limit(ds, LIMIT)
    assert "fraction-of-limit" in all_figures(limited)
    assert notes(limited) == []


def test_cli_plot_writes_the_four_kinds(
    ds: xr.Dataset, tmp_path: Path, capsys: pytest.CaptureFixture, product_results
) -> None:
    from iotune.cli.main import main
    from iotune.results.dataset import save

    small = ds.sel(chunk_cache=[product_results.CACHES[1]], pattern=["timeseries"])
    save(attach_limit(small, LIMIT), tmp_path / "results.nc")
    assert main(["plot", str(tmp_path / "results.nc")]) == 0
    names = {p.stem for p in tmp_path.glob("*.png")}
    assert names == {
        "write",
        "read-timeseries",
        "heatmap-write",
        "heatmap-read",
        "size-vs-write",
        "size-vs-read-timeseries",
        "fraction-of-limit",
    }
    assert "skipped" not in capsys.readouterr().err
    save(small.sel(codec=["none"]), tmp_path / "plain" / "results.nc")
    assert main(["plot", str(tmp_path / "plain")]) == 0
    assert "fraction-of-limit figure skipped" in capsys.readouterr().err
    assert not (tmp_path / "plain" / "fraction-of-limit.png").exists()
