"""What the figures ``iotune plot`` writes say, on a real small sweep: every text fits.

The results come from ``iotune run`` on real netCDF4 files, with a long sweep name
(the issue saw a title cut off) and a swept value that applies nowhere (bit shuffle
with codecs that are not blosc's).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import xarray as xr
import yaml
from matplotlib.backends.backend_agg import FigureCanvasAgg

from iotune.cli.main import main
from iotune.core.units import format_duration, format_number
from iotune.plot import all_figures, fraction_of_limit, heatmap, size_vs_throughput, throughput
from iotune.results.dataset import open_results
from iotune.results.limit import attach_limit
from iotune.results.summary import mib_per_read
from tests.plot.figures import legends, texts_outside

NAME = "tas-daily-cmip6-ssp585-regional-chunking-study"
NOWHERE = (
    "shuffle=bit: applies nowhere: bit shuffle is available only with blosc codecs, "
    "not 'zlib' (allowed: none, byte)"
)
SPEC = {
    "version": 1,
    "name": NAME,
    "workload": {"shape": {"time": 8, "y": 32, "x": 32}, "dtype": "float32"},
    "parameters": {
        "chunks": [[8, 16, 16], [1, 32, 32]],
        "codec": ["zlib", "zstd"],
        "shuffle": ["none", "bit"],
    },
    "read": {"patterns": ["full", "timeseries"]},
    "measure": {"repeats": 2, "cache": "warm", "fsync": False},
    "baselines": ["library"],
}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results directory of a real run of :data:`SPEC`, then a replayed search of it."""
    tmp = tmp_path_factory.mktemp("sweep")
    (tmp / "spec.yaml").write_text(yaml.safe_dump(SPEC))
    out = tmp / "out"
    assert main(["run", str(tmp / "spec.yaml"), "-o", str(out), "--no-progress"]) == 0
    search = ["tune", "--replay", str(out / "results.nc"), "--budget", "4", "--no-progress"]
    assert main([*search, "-o", str(tmp / "search")]) == 0
    return out


@pytest.fixture(scope="module")
def results(sweep: Path) -> xr.Dataset:
    return attach_limit(open_results(sweep), {"write_MiBps": 400.0, "read_MiBps": 800.0})


def test_every_text_of_every_figure_lies_inside_it(sweep: Path, results: xr.Dataset) -> None:
    figures = all_figures(results)
    search = all_figures(open_results(sweep.parent / "search"))
    figures |= {f"search {name}": fig for name, fig in search.items()}
    assert {"heatmap-write", "vs-baselines", "fraction-of-limit", "search importance"} <= set(
        figures
    )
    for name, fig in figures.items():
        assert texts_outside(fig) == [], name


def test_a_value_that_applies_nowhere_is_named_once_at_the_foot(
    sweep: Path, results: xr.Dataset, capsys: pytest.CaptureFixture
) -> None:
    assert main(["show", str(sweep)]) == 0
    shown = [line for line in capsys.readouterr().out.splitlines() if "applies nowhere" in line]
    assert shown == [NOWHERE]  # the words the figures must use
    figures = {
        "write": throughput(results),
        "read-timeseries": throughput(results, metric="read", pattern="timeseries"),
        "shuffle on a heatmap axis": heatmap(results, x="codec", y="shuffle"),
        "size-vs-write": size_vs_throughput(results),
        "fraction-of-limit": fraction_of_limit(results),
    }
    for name, fig in figures.items():
        assert fig.get_supxlabel() == NOWHERE, name
        drawn = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]
        assert sum(NOWHERE in text for text in drawn) == 1, name
        # no panel, row, tick or legend entry for it: bit is named in the footnote only
        assert not [t for t in drawn if "bit" in t and t != NOWHERE], name
        for legend in legends(fig):
            assert "bit" not in [t.get_text() for t in legend.get_texts()], name


def test_figures_of_a_sweep_where_everything_applies_have_no_footnote(
    results: xr.Dataset,
) -> None:
    applied = results.sel(shuffle=["none"])
    for name, fig in all_figures(applied).items():
        assert not fig.get_supxlabel(), name


DURATION = re.compile(r"\d+(\.\d+)? (s|ms|µs)")
SIZE = re.compile(r"\d+(\.\d+)?(B|KiB|MiB|GiB)")


def drawn_ticks(axis) -> dict[float, str]:
    FigureCanvasAgg(axis.get_figure(root=True)).draw()
    low, high = sorted(axis.get_view_interval())
    return {
        float(v): t.get_text()
        for v, t in zip(axis.get_ticklocs(), axis.get_ticklabels(), strict=True)
        if low <= v <= high
    }


def test_rates_sizes_and_times_are_written_as_the_commands_write_them(
    results: xr.Dataset,
) -> None:
    noun, mib = mib_per_read(results, "read:timeseries")
    assert noun == "read" and mib == pytest.approx(8 * 4 / 2**20)  # a pixel: 8 float32
    fig = throughput(results, metric="read", pattern="timeseries")
    (ax,) = fig.axes
    rates = drawn_ticks(ax.yaxis)
    assert rates and all(text == (format_number(v) if v else "0") for v, text in rates.items())
    (side,) = ax.child_axes  # the time a read takes at each of the throughput's ticks
    assert side.get_ylabel() == "time per read"
    times = drawn_ticks(side.yaxis)
    assert times == {v: format_duration(mib / v) if v else "" for v in rates}
    full = throughput(results, metric="read", pattern="full")
    assert not full.axes[0].child_axes  # a large read is judged by its MiB/s alone

    maps = heatmap(results, metric="read")
    cells = {ax.get_title().split("\n")[0]: [t.get_text() for t in ax.texts] for ax in maps.axes}
    assert all("\n" not in cell for cell in cells["read: full pattern"])
    for cell in cells["read: timeseries pattern"]:  # MiB/s, then the time of a read
        rate, time = cell.split("\n")
        assert rate == format_number(float(rate)) and DURATION.fullmatch(time), cell
        number, unit = time.split()
        seconds = float(number) * {"s": 1, "ms": 1e-3, "µs": 1e-6}[unit]
        assert seconds == pytest.approx(mib / float(rate), rel=0.01), cell

    sizes = drawn_ticks(size_vs_throughput(results).axes[0].xaxis)
    assert sizes and all(SIZE.fullmatch(text) for text in sizes.values()), sizes


def test_no_time_axis_when_a_read_moves_different_bytes_by_layout(results: xr.Dataset) -> None:
    """A user's call may count the stored bytes, which compression changes: no one time."""
    varied = results.copy(deep=True)
    moved = varied["read_bytes"].loc[{"pattern": "timeseries"}]
    varied["read_bytes"].loc[{"pattern": "timeseries"}] = moved * (1 + moved.codec.isin(["zstd"]))
    assert mib_per_read(varied, "read:timeseries") is None
    assert not throughput(varied, metric="read", pattern="timeseries").axes[0].child_axes


def test_text_fits_in_figures_of_many_panels_too(product_results) -> None:
    """The crafted product results: facets, a failed point, a wide legend, a long name."""
    ds = product_results()
    ds.attrs["name"] = NAME
    for name, fig in all_figures(ds).items():
        assert texts_outside(fig) == [], name


def _overlapping(texts: list, renderer) -> list[tuple[str, str]]:
    """Pairs of drawn, non-empty texts whose window extents overlap."""
    shown = [t for t in texts if t.get_visible() and t.get_text().strip()]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in shown]
    return [
        (a, b)
        for i, (a, box) in enumerate(boxes)
        for b, other in boxes[i + 1 :]
        if box.overlaps(other)
    ]


@pytest.mark.parametrize("slower", [1.0, 1e-3], ids=["as measured", "a 1000x slower baseline"])
def test_vs_baselines_labels_every_bar_and_no_tick_labels_collide(
    results: xr.Dataset, slower: float
) -> None:
    """Each bar says its speedup, its baseline and its configuration; the log axis reads."""
    from iotune.plot.baselines import vs_baselines
    from iotune.results import speedup
    from iotune.results.labels import label

    ds = results.assign(baseline_read_MiBps=results["baseline_read_MiBps"] * slower)
    fig = vs_baselines(ds)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    (ax,) = fig.axes
    chosen = speedup.each_best(ds)
    rows = speedup.vs_baselines(ds, chosen)
    bars = [t for t in ax.texts if t.get_gid() == "bar-label"]
    assert sorted(t.get_text() for t in bars) == sorted(speedup.times(r["speedup"]) for r in rows)
    assert _overlapping(bars, renderer) == []
    layouts = speedup.layouts(ds)
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        f"{name}\n{layouts[name]}" for name in dict.fromkeys(r["baseline"] for r in rows)
    ]
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        f"read:{p}: {label(coords)}" for p, coords in chosen.items()
    ]
    low, high = ax.get_ylim()
    ticks = [
        t
        for t in [*ax.yaxis.get_ticklabels(), *ax.yaxis.get_ticklabels(minor=True)]
        if low <= t.get_position()[1] <= high and t.get_text()
    ]
    assert len(ticks) >= 2 and all(t.get_text().endswith("x") for t in ticks)
    assert _overlapping(ticks, renderer) == []
    assert _overlapping(ax.get_xticklabels(), renderer) == []


@pytest.mark.parametrize("values", [[1.05, 1.1], [0.95, 1.5], [0.5, 3.0], [2.0, 40.0], [1.0, 1e3]])
def test_a_speedup_axis_has_two_labels_or_more_whatever_its_range(values: list[float]) -> None:
    """Speedups near 1x once left the axis with the one label ``1x``."""
    import matplotlib.pyplot as plt

    from iotune.plot.baselines import _log_axis

    fig, ax = plt.subplots(figsize=(6, 4))
    _log_axis(ax, values)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    low, high = ax.get_ylim()
    ticks = [t for t in ax.yaxis.get_ticklabels() if low <= t.get_position()[1] <= high]
    shown = [t for t in ticks if t.get_text()]
    assert len(shown) >= 2 and all(t.get_text().endswith("x") for t in shown)
    assert _overlapping(shown, canvas.get_renderer()) == []
    plt.close(fig)
