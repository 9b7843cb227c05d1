"""HDF5 on an object store: paged aggregation with a page buffer turns many GETs into few."""

from __future__ import annotations

from iotune.backends import get_backend
from iotune.measuring import access
from iotune.measuring.data import Field
from iotune.model.spec import ReadSpec, StorageSpec, Workload
from tests.objectstore.conftest import Server

WORKLOAD = Workload(("time", "y", "x"), (64, 128, 128), "int16")


def _gets(tmp_path, storage: StorageSpec, knobs: dict) -> dict[str, int]:
    """GETs of a full and a spatial read through fsspec without a block cache."""
    cls = get_backend("hdf5-object")
    wanted = {"chunks": "4x16x16", "cache_type": "none", "read_block_size": 65536} | knobs
    params, _notes = cls.resolve(wanted, WORKLOAD)
    backend = cls()
    backend.bind(storage, tmp_path)
    path = tmp_path / f"trial-{len(knobs)}" / "r0.h5"
    path.parent.mkdir()
    writer = backend.open_writer(path, WORKLOAD, params)
    for start, slab in Field(WORKLOAD).slabs(8):
        writer.write(start, slab)
    writer.close()
    stored = backend.verify(path, params)
    gets = {}
    for pattern in ("full", "spatial"):
        reader = backend.open_reader(path, WORKLOAD, params)
        for selection in access.selections(pattern, WORKLOAD, ReadSpec(patterns=(pattern,))):
            reader.read(selection)
        reader.close()
        gets[pattern] = reader.traffic()["requests"]["GET"]
    backend.remove(path)
    assert stored["object_bytes"] > WORKLOAD.nbytes  # the whole file went up
    return gets


def test_paged_files_with_a_page_buffer_need_far_fewer_gets(tmp_path, s3_server: Server, bucket):
    storage = StorageSpec(f"s3://{bucket}/h5", s3_server.endpoint, "us-east-1")
    plain = _gets(tmp_path, storage, {})
    paged = _gets(tmp_path, storage, {"page_size": 65536, "page_buffer": 2**20})
    # 1024 chunks: unpaged, each chunk and B-tree node is a GET of its own
    assert plain["full"] > 1024
    assert paged["full"] * 10 < plain["full"], (plain, paged)
    assert paged["spatial"] * 3 < plain["spatial"], (plain, paged)
