"""gs:// against a real GCS server (gcp-storage-emulator, PyPI): ``iotune apply`` through gcsfs.

The emulator serves GCS's JSON API, which gcsfs speaks; obstore speaks the XML API,
which it does not implement (HEAD, LIST and DELETE answer 501 Not Implemented, a PUT
answers without ETag), so ``iotune run``'s obstore clients cannot be tested on it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from iotune.app import api
from tests.convert.conftest import make_cf_source
from tests.objectstore.applying import SETTINGS, assert_same_data, stored_chunks
from tests.objectstore.conftest import Server, gcs_bucket, gcs_env

#: two chunks a variable: the emulators answer one request at a time
FEW = "chunks=40x16x24 codec=zstd level=3"


@pytest.fixture
def bucket(gcs_server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    for key, value in gcs_env(gcs_server).items():
        monkeypatch.setenv(key, value)
    return gcs_bucket(gcs_server)


def test_apply_to_and_from_gcs(tmp_path: Path, bucket: str) -> None:
    from iotune.convert.stores import Location

    source = make_cf_source(tmp_path / "source.nc")
    where = Location.of(f"gs://{bucket}/in/source.nc", flag="test")
    where.fs.put_file(str(source), where.path)
    first, second = f"gs://{bucket}/a.zarr", f"gs://{bucket}/b.zarr"
    api.apply(None, where.url, first, settings=FEW, verify="full", progress=False)
    settings = "chunks=40x32x12 codec=zstd level=3"
    report = api.apply(None, first, second, settings=settings, verify="full", progress=False)
    assert_same_data(source, first)
    assert_same_data(source, second)
    assert stored_chunks(second, "pr") == ((40, 32, 12), ["ZstdCodec"])
    assert report.source == first and report.bytes_before > 0


def test_a_missing_bucket_or_object_is_one_line(tmp_path: Path, bucket: str) -> None:
    from iotune.core.errors import UsageError

    source = make_cf_source(tmp_path / "source.nc")
    for src, target, said in [
        (str(source), f"gs://no-{bucket}/a.zarr", "does not exist"),
        (f"gs://{bucket}/missing.nc", str(tmp_path / "a.zarr"), "no such object"),
    ]:
        with pytest.raises(UsageError, match=said):
            api.apply(None, src, target, settings=SETTINGS, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source.nc"]
