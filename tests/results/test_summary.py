"""iotune.results.summary: the text of `iotune run` and `iotune show`, read through ds.iotune."""

from __future__ import annotations

import pytest

from iotune.core.units import format_duration
from iotune.results import summary


def test_best_per_metric_is_the_accessors_best(crafted_results) -> None:
    ds = crafted_results()
    rows = {row["metric"]: row for row in summary.best(ds)}
    assert list(rows) == ["write", "read:full", "read:spatial", "read:timeseries"]
    for metric, row in rows.items():
        best = ds.iotune.best(metric)
        assert (row["config"], row["MiBps"], row["ratio"]) == (
            best.label,
            best.median[metric],
            best.ratio,
        )
    text = summary.format_best(ds)
    assert "read:timeseries         10.0 MiB/s  ratio  2.50  chunks=8x16x16 codec=zlib" in text


def test_failed_points_never_win_and_sizes_are_labelled(fake_results) -> None:
    ds = fake_results({"parameters.chunk_cache": ["1MiB", "64MiB"]}, seed=3)
    ds["status"].loc[{"codec": "zlib"}] = "failed"  # numbers left in place: still no winner
    text = summary.format_best(ds)
    assert "codec=zlib" not in text
    assert "chunk_cache=64MiB" in text or "chunk_cache=1MiB" in text
    ds["status"][:] = "failed"
    assert "write              no successful trial" in summary.format_best(ds)


def test_table_rows_are_the_accessors_points(crafted_results) -> None:
    ds = crafted_results()
    lines = summary.table(ds).splitlines()
    assert lines[0].split() == [
        *("chunks", "codec", "write", "read:full", "read:spatial", "read:timeseries"),
        *("ratio", "status"),
    ]
    assert lines[2].split() == ["contiguous", "none", "100", "200", "30.0", "1.00", "1.00", "ok"]
    assert len(lines) == 2 + len(ds.iotune.points()) + 1
    assert "1 not-applicable points hidden" in lines[-1]
    every = summary.table(ds, include_not_applicable=True).splitlines()
    assert every[3].split()[:4] == ["contiguous", "zlib", "-", "-"]
    assert ds.iotune.counts() == {"ok": 5, "not_applicable": 1}


def test_a_users_pattern_shows_seconds_a_call_on_grids_and_searches(crafted_results) -> None:
    import json

    import numpy as np

    ds = crafted_results()
    ds["read_s"] = 1 / ds["read_MiBps"]  # one MiB a call
    ds.attrs["provenance_user_patterns"] = json.dumps([{"name": "spatial", "call": "m:f"}])
    best = ds.iotune.best("read:spatial")
    seconds = ds["read_s"].sel(pattern="spatial", **best.coords).median("repeat")
    assert summary.seconds_per_call(ds, "read:spatial", best.coords) == {
        "s_per_call": float(seconds)
    }
    assert summary.seconds_per_call(ds, "read:full", best.coords) == {}  # a built-in
    line = next(x for x in summary.format_best(ds).splitlines() if "read:spatial" in x)
    # ranked by the time a call, said first; MiB/s from storage as information
    assert line.split()[1:4] == [*format_duration(float(seconds)).split(), "a"], line
    assert line.endswith("MiB/s from storage"), line
    # a search's results hold visited points along ``point``, not a grid
    flat = ds.stack(point=list(best.coords)).reset_index("point")
    flat = flat.transpose("point", ...)
    found = summary.seconds_per_call(flat, "read:spatial", best.coords)
    assert found == {"s_per_call": float(seconds)}
    assert np.isfinite(found["s_per_call"])


def test_small_reads_show_time_per_read_beside_the_rate(crafted_results) -> None:
    """A 16-pixel time series at 0.48 MiB/s means little; 1.95 ms a read does."""
    ds = crafted_results()
    ds["read_s"] = 1 / ds["read_MiBps"]
    ds["read_ops"] = ds["read_MiBps"].isel(repeat=0, drop=True) * 0 + 16
    best = ds.iotune.best("read:timeseries")
    seconds = float(ds["read_s"].sel(pattern="timeseries", **best.coords).median("repeat")) / 16
    assert summary.seconds_per_read(ds, "read:timeseries", best.coords) == {"s_per_read": seconds}
    assert summary.seconds_per_read(ds, "read:full", best.coords) == {}  # reads a lot at once
    line = next(x for x in summary.format_best(ds).splitlines() if "read:timeseries" in x)
    assert line.endswith(f"({format_duration(seconds)} a read)")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(1.234, "1.23 s"), (0.0123, "12.3 ms"), (0.000456, "456 µs"), (0.9999, "1 s"), (120, "120 s")],
)
def test_durations_have_three_significant_digits(seconds, text) -> None:
    assert format_duration(seconds) == text


def test_labels_say_what_the_library_chose_and_leave_out_what_did_not_apply(tmp_path) -> None:
    """``chunks=auto`` is contiguous without a codec here; ``level`` means nothing for none."""
    import yaml

    from iotune.app import api

    spec = {
        "version": 1,
        "name": "auto",
        "workload": {"shape": {"time": 16, "y": 64, "x": 64}, "dtype": "float32"},
        "parameters": {"chunks": ["auto"], "codec": ["none", "zlib"], "level": [1, 5]},
        "read": {"patterns": ["full"]},
        "measure": {"repeats": 1, "cache": "warm", "fsync": False},
    }
    (tmp_path / "auto.yaml").write_text(yaml.safe_dump(spec))
    ds = api.run(tmp_path / "auto.yaml", out=tmp_path / "out", progress=False)
    labels = {c.label for c in ds.iotune.rank("write").candidates}
    assert "chunks=auto (contiguous) codec=none" in labels
    found = {x for x in labels if "zlib" in x}
    assert found == {
        "chunks=auto (16x64x64) codec=zlib level=1",
        "chunks=auto (16x64x64) codec=zlib level=5",
    }
