"""The requests a conversion would send to an object store, and their price."""

from __future__ import annotations

import pytest

from iotune.convert.regions import Region
from iotune.convert.requests import (
    LIST_PRICES,
    checked_regions,
    chunks_touched,
    cost,
    prices_for,
    scheme,
)


def test_chunks_touched_counts_a_chunk_two_regions_share_twice() -> None:
    regions = [Region(0, 0, 6), Region(1, 6, 10)]
    # 10 rows in chunks of 4 along the first dimension, 2 x 3 chunks across
    assert chunks_touched((10, 8, 9), (4, 4, 3), regions) == 6 * (2 + 2)  # chunk 4..8 twice
    assert chunks_touched((10, 8, 9), (5, 4, 3), regions) == 6 * (2 + 1)
    assert chunks_touched((10, 8, 9), "contiguous", regions) == 2  # a ranged GET per region
    assert chunks_touched((), "contiguous", regions) == 1  # a scalar: one object


def test_checked_regions_follow_the_verify_mode() -> None:
    regions = [Region(i, i, i + 1) for i in range(7)]
    assert checked_regions(regions, "full") == regions
    assert [r.index for r in checked_regions(regions, "sample")] == [0, 3, 6]
    assert checked_regions(regions, "none") == []


@pytest.mark.parametrize(
    ("where", "found"),
    [("s3://b/x.zarr", "s3"), ("gs://b/x.nc", "gs"), ("az://c/x", "az"), ("/tmp/x.nc", "")],
)
def test_scheme_names_the_object_store(where: str, found: str) -> None:
    assert scheme(where) == found


def test_prices_are_the_sweeps_else_the_dated_list_prices() -> None:
    mine = {"PUT": 1.0, "GET": 0.5, "transfer_GB": 2.0}
    assert prices_for("s3://b/x", mine) == (mine, "the sweep's storage.prices")
    table, where = prices_for("gs://b/x", None)
    assert table == LIST_PRICES["gs"] and "list prices of" in where
    assert prices_for("/tmp/x", None) == ({}, "no price table")
    assert cost({"PUT": 3, "GET": 4}, mine, bytes_out=10**9) == pytest.approx(3 + 2 + 2)
