"""The decision of a real sweep: in place, through references or rewritten, and when each pays.

The sweep (``decision_results`` in tests/conftest.py) read a 2 MiB CF netCDF file as
it is (the file itself, opened with xarray), through VirtualiZarr references and
rewritten to Zarr; the break-even is checked against the medians the results recorded,
the in-place figure is a read of the source file, and a rewrite that reads no faster
never pays.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow
if os.environ.get("IOTUNE_REQUIRE_VIRTUAL") != "1":  # CI: the virtual extra, so a failure
    pytest.importorskip("virtualizarr")


def _decision(ds, objective: str = "read:timeseries") -> dict:
    from iotune.analysis.decision import decide

    return decide(ds, ds.iotune.rank(objective).ranked, objective={objective: 1.0})


def test_the_break_even_is_the_recorded_medians_arithmetic(decision_results: Path) -> None:
    from iotune.results.dataset import open_results

    ds = open_results(decision_results)
    found = _decision(ds)
    assert found["compare"] == ["in-place", "references", "rewrite"] and not found["missing"]
    outcome = found["objectives"]["read:timeseries"]
    ways = {w["way"]: w for w in outcome["ways"]}
    assert set(ways) == {"in-place", "references", "rewrite"}
    assert ways["in-place"]["one_off_s"] == 0 and ways["in-place"]["one_off_bytes"] == 0
    zarr = ds.sel(backend="zarr").isel(chunks=0)
    write = float(zarr["write_s"].median("repeat"))
    mine = float(zarr["read_s"].sel(pattern="timeseries").median("repeat"))
    source = ds.sel(backend="inplace").isel(chunks=0)
    theirs = float(source["read_s"].sel(pattern="timeseries").median("repeat"))
    assert ways["in-place"]["read_s"] == pytest.approx(theirs)
    row = next(
        r for r in outcome["break_even"] if (r["way"], r["against"]) == ("rewrite", "in-place")
    )
    assert ways["rewrite"]["one_off_s"] == pytest.approx(write)
    assert ways["rewrite"]["one_off_bytes"] == float(zarr["file_bytes"].values.ravel()[0])
    if theirs > mine:
        assert row["reads"] == pytest.approx(write / (theirs - mine))
    else:  # a rewrite that happened to read no faster on this machine never pays
        assert row["never"]
    assert row["low"] <= row["reads"] <= row["high"]
    # the references are kilobytes, the rewrite the data
    assert ways["references"]["one_off_bytes"] < 64 * 1024 < ways["rewrite"]["one_off_bytes"]
    # one read of every pattern: both patterns' medians summed
    every = {w["way"]: w for w in found["objectives"]["workload"]["ways"]}
    both = float(zarr["read_s"].median("repeat").sum("pattern"))
    assert every["rewrite"]["read_s"] == pytest.approx(both)


def test_a_rewrite_that_reads_no_faster_never_pays(decision_results: Path) -> None:
    from iotune.results.dataset import open_results

    ds = open_results(decision_results).load()
    # the rewrite's reads made 20 % slower than the source's, repeat by repeat
    source = ds["read_s"].sel(backend="inplace", chunks="64x16x16").values
    ds["read_s"].loc[{"backend": "zarr", "chunks": "64x16x16"}] = source * 1.2
    for metric in ("read:full", "read:timeseries"):
        outcome = _decision(ds, metric)["objectives"][metric]
        row = next(
            r for r in outcome["break_even"] if (r["way"], r["against"]) == ("rewrite", "in-place")
        )
        assert row["never"] and math.isinf(row["reads"]) and row["saved_s"] < 0
        assert outcome["choice"] != "rewrite"
    assert np.all(np.isfinite(source))


def test_in_place_is_a_read_of_the_source_file_itself(decision_results: Path) -> None:
    import json

    from iotune.results.dataset import open_results

    ds = open_results(decision_results)
    point = ds.sel(backend="inplace").isel(chunks=0)
    assert str(point["status"].values) == "ok"
    source = decision_results.parent / "tas.nc"
    # its stored size and layout are the source file's; nothing was written
    assert float(point["file_bytes"].values.ravel()[0]) == source.stat().st_size
    stored = json.loads(str(point["file_properties"].values.ravel()[0]))
    assert stored["source_chunks"] == [1, 64, 128] and stored["source_compression"] == "zlib"
    assert stored["written_bytes"] == 0 and stored["source_files"] == 1
    label = {w["way"]: w["label"] for w in _decision(ds)["objectives"]["read:full"]["ways"]}
    assert "backend=inplace" in label["in-place"] and "chunks=1x64x128 zlib" in label["in-place"]


def test_only_the_rewrite_has_a_write_figure(decision_results: Path) -> None:
    from iotune.results.dataset import open_results

    ds = open_results(decision_results)
    # the in-place trial's "write" stored nothing, and the references' build is a few
    # kilobytes beside a rewrite of the data: neither is a write to rank against it
    assert float(ds["write_s"].sel(backend="inplace").median()) < 0.05
    write = ds.iotune.metric("write")
    assert bool(write.sel(backend="inplace").isnull().all())
    assert bool(write.sel(backend="virtual").isnull().all())
    assert bool(ds["write_s"].sel(backend="virtual").notnull().any())  # still a one-off cost
    assert bool(write.sel(backend="zarr").notnull().all())
    assert ds.iotune.rank("write").best.settings["backend"] == "zarr"
