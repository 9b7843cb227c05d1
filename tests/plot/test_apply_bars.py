"""The before/after bars of ``iotune apply``'s record."""

from __future__ import annotations

from iotune.plot.apply import before_after

RECORD = {
    "variable": "tas",
    "settings": "backend=netcdf4 chunks=64x16x16 codec=none",
    "repeats": 3,
    "patterns": {
        "timeseries": {
            "speedup": 2.0,
            "low": 1.5,
            "high": 2.5,
            "source_s": [0.04, 0.05, 0.06],
            "target_s": [0.02, 0.025, 0.03],
        },
        "climatology": {"error": "myanalysis:f cannot be loaded: ModuleNotFoundError"},
    },
}


def test_one_pair_of_bars_per_measured_pattern_labelled_with_its_speedup() -> None:
    ax = before_after(RECORD).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["read:timeseries\n2x [1.5 to 2.5]"]
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    assert heights == [0.025, 0.05]  # median s, after and before; the failed pattern left out


def test_times_are_written_as_the_commands_write_a_duration() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = before_after(RECORD)
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert ax.get_ylabel() == "median time per read, cold"
    assert ticks[0] == "0" and "10 ms" in ticks and "50 ms" in ticks, ticks
