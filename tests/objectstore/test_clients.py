"""What iotune counts is what the store receives: each client's requests, request by request.

The store is reached through the counting proxy, so each count iotune records
for a read or a write is compared with the requests that crossed the wire.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iotune.backends import get_backend
from iotune.measuring import access
from iotune.measuring.data import Field
from iotune.model.spec import ReadSpec, StorageSpec, Workload
from tests.objectstore.conftest import Server
from tests.objectstore.proxy import latency

WORKLOAD = Workload(("time", "y", "x"), (16, 64, 64), "int16")
KINDS = {"GET": "GET", "PUT": "PUT", "HEAD": "HEAD", "DELETE": "DELETE", "POST": "POST"}


def _crossed(proxy, since: int) -> dict[str, int]:
    """Requests the proxy forwarded since index ``since``, by kind (a GET ?list-type is a LIST)."""
    counts: dict[str, int] = {}
    for method, path in proxy.requests[since:]:
        kind = "LIST" if method == "GET" and "list-type" in path else method
        if method == "POST" and "delete" in path:
            kind = "POST"
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def _nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v}


CASES = [
    ("object", {"part_size": 5 * 2**20, "request_concurrency": 4, "coalesce": 0}),
    ("object", {"part_size": 5 * 2**20, "request_concurrency": 4, "coalesce": 2**20}),
    ("zarr-object", {"chunks": "4x32x32", "client": "obstore"}),
    ("zarr-object", {"chunks": "4x32x32", "client": "fsspec", "consolidated": "on"}),
    ("hdf5-object", {"chunks": "4x32x32", "cache_type": "none", "read_block_size": 65536}),
    ("hdf5-object", {"chunks": "4x32x32", "cache_type": "blockcache"}),
    ("netcdf4-object", {"chunks": "4x32x32", "codec": "zlib", "cache_type": "readahead"}),
]


@pytest.mark.parametrize(("name", "knobs"), CASES, ids=lambda c: str(c))
def test_each_request_is_counted(tmp_path, s3_server: Server, bucket: str, name, knobs) -> None:
    cls = get_backend(name)
    params, _notes = cls.resolve(knobs, WORKLOAD)
    with latency((s3_server.host, s3_server.port), 0.0) as proxy:
        storage = StorageSpec(f"s3://{bucket}/c", proxy.endpoint, "us-east-1")
        backend = cls()
        backend.bind(storage, tmp_path)
        path = tmp_path / "trial-x" / f"r0{cls.suffix}"
        path.parent.mkdir()
        before = len(proxy.requests)
        writer = backend.open_writer(path, WORKLOAD, params)
        for start, slab in Field(WORKLOAD).slabs(4):
            writer.write(start, slab)
        writer.close()
        wrote = writer.traffic()
        assert _nonzero(wrote["requests"]) == _crossed(proxy, before), wrote
        for pattern in ("full", "timeseries"):
            before = len(proxy.requests)
            reader = backend.open_reader(path, WORKLOAD, params)
            for selection in access.selections(pattern, WORKLOAD, ReadSpec(patterns=(pattern,))):
                reader.read(selection)
            reader.close()
            read = reader.traffic()
            assert _nonzero(read["requests"]) == _crossed(proxy, before), (pattern, read)
            assert read["ttfb_samples"] == read["requests"]["GET"]
        backend.remove(path)


def test_coalescing_merges_the_runs_of_a_time_series(tmp_path, s3_server: Server, bucket):
    """16 time steps of a pixel lie 8 KiB apart: merged with a 1 MiB gap, 16 GETs without."""
    cls = get_backend("object")
    storage = StorageSpec(f"s3://{bucket}/c", s3_server.endpoint, "us-east-1")
    backend = cls()
    backend.bind(storage, tmp_path)
    path: Path = tmp_path / "r.bin"
    params = {"part_size": 5 * 2**20, "request_concurrency": 4, "coalesce": 0}
    writer = backend.open_writer(path, WORKLOAD, params)
    for start, slab in Field(WORKLOAD).slabs(16):
        writer.write(start, slab)
    writer.close()
    pixel = (slice(None), 10, 20)
    gets = {}
    for gap in (0, 2**20):
        reader = backend.open_reader(path, WORKLOAD, params | {"coalesce": gap})
        values = reader.read(pixel)
        reader.close()
        gets[gap] = reader.traffic()["requests"]["GET"]
        np.testing.assert_array_equal(values, Field(WORKLOAD).slab(0, 16)[pixel])
    assert gets == {0: 16, 2**20: 1}
    backend.remove(path)
