"""The requests a conversion sends to an object store, and what they cost.

On an object store every chunk (or shard) written is one PUT, and every stored chunk
of the source a region touches is one ranged GET; a netCDF/HDF5 target is one object
uploaded in parts.  The counts come from the region plan alone, before anything is
read or written.  Prices: the sweep's ``storage.prices`` when it had them, else the
providers' list prices in :data:`LIST_PRICES` (dated; they change).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from iotune.convert.regions import Region, sample
from iotune.convert.source import source_chunks

#: the schemes of the object stores a source or target may be on
STORE_SCHEMES = ("s3", "gs", "az")
#: bytes per PUT part of a single-object (netCDF/HDF5) upload, as ``calibrate --part-size``
PART_SIZE = 8 * 2**20
#: list prices in USD per request (standard storage class, in the region, no transfer
#: out), read from the providers' pricing pages on PRICES_DATE; a sweep's
#: ``storage.prices`` replace them
PRICES_DATE = "2026-11-25"
LIST_PRICES: dict[str, dict[str, float]] = {
    # S3 Standard, us-east-1: PUT/POST/LIST $0.005, GET $0.0004 per 1,000
    "s3": {"PUT": 0.005 / 1000, "POST": 0.005 / 1000, "GET": 0.0004 / 1000},
    # Cloud Storage Standard: class A $0.05, class B $0.004 per 10,000 operations
    "gs": {"PUT": 0.05 / 10000, "POST": 0.05 / 10000, "GET": 0.004 / 10000},
    # Azure Blob hot tier, LRS: write $0.055, read $0.0044 per 10,000 operations
    "az": {"PUT": 0.055 / 10000, "POST": 0.055 / 10000, "GET": 0.0044 / 10000},
}


def scheme(where: object) -> str:
    """``s3``, ``gs`` or ``az`` for an object-store URL, else ``""`` (a local path)."""
    text = str(where)
    head, sep, _ = text.partition("://")
    return head if sep and head in STORE_SCHEMES else ""


def chunks_touched(
    shape: Sequence[int], chunks: Sequence[int] | str, regions: Iterable[Region]
) -> int:
    """Stored chunks of an array the regions (rows of its first dimension) touch, summed.

    A chunk two regions share is counted twice: it is fetched (or written) twice.
    """
    if not shape:
        return 1
    if isinstance(chunks, str):  # contiguous: one ranged request per region
        return sum(1 for _ in regions)
    across = math.prod(-(-n // max(c, 1)) for n, c in zip(shape[1:], chunks[1:], strict=True))
    first = max(int(chunks[0]), 1)
    return sum(
        across * ((r.stop - 1) // first - r.start // first + 1) for r in regions if r.stop > r.start
    )


def checked_regions(regions: list[Region], verify_mode: str) -> list[Region]:
    """The regions a verification of ``verify_mode`` reads again (full, sample, none)."""
    if verify_mode == "full":
        return list(regions)
    return sample(regions) if verify_mode == "sample" else []


def count_requests(
    job: Any, *, target_bytes: int | None, verify_mode: str = "sample"
) -> dict[str, int]:
    """PUTs of the target and GETs of the source of a prepared conversion.

    Parameters
    ----------
    job
        A :class:`iotune.convert.convert.Job`.
    target_bytes
        The target's predicted size (a single-object target is uploaded in parts of
        :data:`PART_SIZE`); None counts one part.
    verify_mode
        ``full`` and ``sample`` read the verified regions of the source again.
    """
    ds, regions = job.source.ds, job.regions
    checked = (
        regions if verify_mode == "full" else sample(regions) if verify_mode == "sample" else []
    )
    gets = 0
    for name, var in ds.variables.items():
        own = source_chunks(var)
        rows = regions if name in job.by_region else [Region(0, 0, var.shape[0] if var.ndim else 1)]
        again = checked if name in job.by_region else rows if checked else []
        gets += chunks_touched(var.shape, own, rows) + chunks_touched(var.shape, own, again)
    if not job.layout.writer.object_store:  # one file: uploaded in parts
        parts = max(1, -(-(target_bytes or 0) // PART_SIZE))
        return {"PUT": parts, "GET": gets}
    puts = 1  # the group's zarr.json
    for name, var in ds.variables.items():
        puts += 1  # the array's zarr.json
        if not var.ndim:
            puts += 1
            continue
        dims = tuple(map(str, var.dims))
        if name in job.converted:
            stored = job.layout.shards_for(dims, var.shape) or job.layout.chunks_for(
                dims, var.shape
            )
        else:
            stored = source_chunks(var)
        if isinstance(stored, str):
            stored = tuple(var.shape)  # one chunk (xarray's default for an unchunked variable)
        rows = regions if name in job.by_region else [Region(0, 0, var.shape[0])]
        puts += chunks_touched(var.shape, stored, rows)
    return {"PUT": puts, "GET": gets}


def prices_for(
    where: str, sweep_prices: Mapping[str, float] | None
) -> tuple[dict[str, float], str]:
    """The price table for the store at ``where`` and where it comes from."""
    if sweep_prices:
        return dict(sweep_prices), "the sweep's storage.prices"
    found = scheme(where)
    if found in LIST_PRICES:
        return dict(LIST_PRICES[found]), f"{found} list prices of {PRICES_DATE} (USD)"
    return {}, "no price table"


def cost(counts: Mapping[str, int], prices: Mapping[str, float], *, bytes_out: int = 0) -> float:
    """Requests times their prices, plus ``transfer_GB`` per GB moved out of the store."""
    total = sum(n * prices.get(kind, 0.0) for kind, n in counts.items())
    return total + bytes_out / 1e9 * prices.get("transfer_GB", 0.0)
