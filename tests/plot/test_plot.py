"""Figures from a crafted results Dataset whose winner and Pareto frontier are known."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

from iotune.core.errors import ResultsError
from iotune.plot import all_figures, size_vs_throughput, throughput
from tests.plot.figures import legends


@pytest.fixture
def ds(product_results) -> xr.Dataset:
    return product_results()


def tick_labels(ax) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels()]


def errorbars(ax) -> dict[str, ErrorbarContainer]:
    return {c.get_label(): c for c in ax.containers if isinstance(c, ErrorbarContainer)}


def test_import_does_not_load_matplotlib() -> None:
    code = "import sys, iotune.plot; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_write_throughput_layout(ds: xr.Dataset, product_results) -> None:
    fig = throughput(ds)
    assert isinstance(fig, Figure)
    # chunks on x, codec as hue, one panel per chunk_cache value.
    assert len(fig.axes) == len(product_results.CACHES)
    assert [ax.get_title() for ax in fig.axes] == ["chunk_cache=1MiB", "chunk_cache=64MiB"]
    for ax in fig.axes:
        assert tick_labels(ax) == product_results.CHUNKS
        assert ax.get_xlabel() == "chunks"
        assert ax.get_yscale() == "linear"
    assert "MiB/s" in fig.axes[0].get_ylabel()
    assert "write" in fig.axes[0].get_ylabel()
    (legend,) = legends(fig)
    assert legend.get_title().get_text() == "codec"
    assert [t.get_text() for t in legend.get_texts()] == product_results.CODECS
    title = fig.get_suptitle()
    assert "demo-sweep" in title
    assert "write" in title


def test_min_max_spread_is_drawn(ds: xr.Dataset) -> None:
    fig = throughput(ds)
    big_cache = fig.axes[1]
    bars = errorbars(big_cache)["none"]
    segments = bars.lines[2][0].get_segments()
    # The winner 64x32x32 / none / 64MiB: median 360, repeats 324 and 396.
    ys = sorted(seg[:, 1].tolist() for seg in segments)
    assert any(np.allclose(y, [324.0, 396.0]) for y in ys)
    assert np.isclose(np.nanmax(bars.lines[0].get_ydata()), 360.0)


def test_failed_point_is_missing(ds: xr.Dataset) -> None:
    fig = throughput(ds)
    small_cache = fig.axes[0]
    zstd = errorbars(small_cache)["zstd"].lines[0].get_ydata()
    assert np.isnan(zstd[0])
    assert np.isfinite(zstd[1:]).all()


def test_read_needs_a_known_pattern(ds: xr.Dataset, product_results) -> None:
    with pytest.raises(ResultsError, match="pattern"):
        throughput(ds, metric="read")
    with pytest.raises(ResultsError, match="pattern"):
        throughput(ds, metric="read", pattern="diagonal")
    with pytest.raises(ResultsError, match="metric"):
        throughput(ds, metric="latency")
    fig = throughput(ds, metric="read", pattern="spatial")
    assert "spatial" in fig.get_suptitle()
    assert "read" in fig.axes[0].get_ylabel()
    winner = errorbars(fig.axes[1])["none"].lines[0].get_ydata()
    assert np.isclose(np.nanmax(winner), 360.0 * product_results.PATTERN_SPEED[1])


def test_byte_values_on_x_get_human_labels(ds: xr.Dataset, product_results) -> None:
    fig = throughput(ds, x="chunk_cache", hue="codec")
    assert len(fig.axes) == len(product_results.CHUNKS)
    assert tick_labels(fig.axes[0]) == ["1MiB", "64MiB"]
    assert fig.axes[0].get_title() == "chunks=contiguous"


def test_bad_dims_are_refused(ds: xr.Dataset) -> None:
    with pytest.raises(ResultsError, match="not a swept parameter"):
        throughput(ds, x="level")
    with pytest.raises(ResultsError, match="differ"):
        throughput(ds, x="codec", hue="codec")


def test_too_many_panels_are_reduced_by_the_median() -> None:
    rng = np.random.default_rng(0)
    dims = {"chunks": 2, "codec": 2, "level": 5, "shuffle": 3, "backend": 2}
    ds = xr.Dataset(
        {"write_MiBps": ((*dims, "repeat"), rng.uniform(50, 60, (*dims.values(), 2)))},
        coords={d: [f"{d}{i}" for i in range(n)] for d, n in dims.items()},
        attrs={"name": "wide", "swept": " ".join(dims)},
    )
    fig = throughput(ds)
    assert len(fig.axes) == 10  # level x backend fit in 12 panels, shuffle does not
    assert "median over shuffle" in fig.get_suptitle()


def test_log_scale_only_for_a_wide_span(ds: xr.Dataset) -> None:
    ds["write_MiBps"].loc[{"codec": "zlib"}] = ds["write_MiBps"].sel(codec="zlib") / 1000
    assert throughput(ds).axes[0].get_yscale() == "log"
    assert throughput(ds, logy=False).axes[0].get_yscale() == "linear"


def test_all_nan_panel_says_so(ds: xr.Dataset) -> None:
    ds["write_MiBps"].loc[{"chunk_cache": 2**20}] = np.nan
    fig = throughput(ds)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "no successful trials" in texts
    assert not fig.axes[1].texts


def test_size_vs_throughput_marks_the_pareto_frontier(ds: xr.Dataset, product_results) -> None:
    fig = size_vs_throughput(ds)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "stored size"
    assert "MiB/s" in ax.get_ylabel()
    (frontier,) = [line for line in ax.get_lines() if line.get_label() == "Pareto frontier"]
    assert frontier.get_drawstyle() == "steps-post"
    size, speed = frontier.get_data()  # bytes, MiB/s
    points = set(zip(np.round(size / 2**20, 6).tolist(), speed.tolist(), strict=True))
    assert points == product_results.FRONTIER
    # 24 grid points, one failed; the frontier's own highlight ring is not a data point.
    scattered = [c for c in ax.collections if isinstance(c, PathCollection)]
    n_points = sum(len(c.get_offsets()) for c in scattered) - len(product_results.FRONTIER)
    assert n_points == 23
    assert [lg.get_title().get_text() for lg in legends(fig)] == ["codec", "chunks"]
    assert any("64x32x32 / none / 64MiB" in t.get_text() for t in ax.texts)
    # sizes on the axis as the commands write them: binary units, 3 significant digits
    FigureCanvasAgg(fig).draw()
    sizes = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert sizes and all(re.fullmatch(r"\d+(\.\d+)?(B|KiB|MiB|GiB)", t) for t in sizes), sizes


def test_size_vs_read(ds: xr.Dataset) -> None:
    fig = size_vs_throughput(ds, metric="read", pattern="full")
    assert "full" in fig.get_suptitle()
    (frontier,) = [line for line in ax_lines(fig) if line.get_label() == "Pareto frontier"]
    assert sorted(frontier.get_ydata()) == pytest.approx([360.0, 648.0, 720.0])


def ax_lines(fig: Figure) -> list:
    return fig.axes[0].get_lines()


def test_all_figures_keys(ds: xr.Dataset) -> None:
    figures = all_figures(ds)
    assert list(figures) == [
        "write",
        "read-full",
        "read-spatial",
        "read-timeseries",
        "heatmap-write",
        "heatmap-read",
        "size-vs-write",
        "size-vs-read-full",
        "size-vs-read-spatial",
        "size-vs-read-timeseries",
    ]
    assert all(isinstance(f, Figure) for f in figures.values())


def test_write_only_results_have_no_read_figures(ds: xr.Dataset) -> None:
    figures = all_figures(ds.drop_vars("read_MiBps"))
    assert list(figures) == ["write", "heatmap-write", "size-vs-write"]


def test_one_swept_parameter(ds: xr.Dataset, product_results) -> None:
    one = ds.sel(chunks="auto", chunk_cache=2**20, drop=True).assign_attrs(swept="codec")
    fig = throughput(one)
    (ax,) = fig.axes
    assert tick_labels(ax) == product_results.CODECS
    assert not legends(fig)
    assert len(errorbars(ax)) == 1
    assert set(all_figures(one)) >= {"write", "read-full", "size-vs-write", "heatmap-read"}


def test_nothing_swept_draws_a_bar(ds: xr.Dataset) -> None:
    single = ds.sel(chunks="auto", codec="zlib", chunk_cache=2**20, drop=True)
    single = single.assign_attrs(swept="")
    fig = throughput(single)
    (ax,) = fig.axes
    (bar,) = ax.patches
    assert bar.get_height() == pytest.approx(200.0 * 0.3)
    segments = [
        s for c in ax.collections if isinstance(c, LineCollection) for s in c.get_segments()
    ]
    assert np.allclose(sorted(segments[0][:, 1]), [54.0, 66.0])
    assert len(all_figures(single)) == 8  # no heatmaps: nothing was swept


def test_missing_swept_attribute_falls_back_to_dims(ds: xr.Dataset, product_results) -> None:
    del ds.attrs["swept"]
    fig = throughput(ds)
    assert len(fig.axes) == len(product_results.CACHES)
    assert legends(fig)[0].get_title().get_text() == "codec"


def test_figures_save_as_png(ds: xr.Dataset, tmp_path) -> None:
    for key, fig in all_figures(ds).items():
        path = tmp_path / f"{key}.png"
        fig.savefig(path)
        assert path.read_bytes().startswith(b"\x89PNG")


def test_figures_can_be_made_in_worker_threads(ds: xr.Dataset) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=4) as pool:
        figures = list(pool.map(all_figures, [ds] * 4))
    assert all(len(f) == 10 for f in figures)


def test_all_failed_results_still_plot(ds: xr.Dataset) -> None:
    for var in ("write_MiBps", "read_MiBps", "file_bytes"):
        ds[var][:] = np.nan
    ds["status"][:] = "failed"
    figures = all_figures(ds)
    assert all(
        "no successful trials" in [t.get_text() for t in f.axes[0].texts] for f in figures.values()
    )


def test_numeric_parameter_on_x(ds: xr.Dataset) -> None:
    levels = ds.sel(chunks="auto", drop=True).rename(codec="level")
    levels = levels.assign_coords(level=[0, 1, 5, 9]).assign_attrs(swept="level chunk_cache")
    fig = throughput(levels)
    assert tick_labels(fig.axes[0]) == ["0", "1", "5", "9"]
    assert legends(fig)[0].get_title().get_text() == "chunk_cache"
    assert [t.get_text() for t in legends(fig)[0].get_texts()] == ["1MiB", "64MiB"]
    assert fig.axes[0].get_xlabel() == "level"


def test_pattern_is_refused_for_writes(ds: xr.Dataset) -> None:
    with pytest.raises(ResultsError, match="pattern"):
        throughput(ds, pattern="full")
