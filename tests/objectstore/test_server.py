"""The test store and the latency proxy are real: obstore and s3fs talk S3 to them."""

from __future__ import annotations

import statistics
import time

from tests.objectstore.conftest import KEYS, Server
from tests.objectstore.proxy import latency


def _store(endpoint: str, bucket: str):
    from obstore.store import S3Store

    return S3Store(
        bucket,
        endpoint=endpoint,
        region="us-east-1",
        access_key_id=KEYS["AWS_ACCESS_KEY_ID"],
        secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"],
        client_options={"allow_http": True},
    )


def test_obstore_and_s3fs_round_trip_an_object(s3_server: Server, bucket: str) -> None:
    import obstore
    import s3fs

    store = _store(s3_server.endpoint, bucket)
    payload = bytes(range(256)) * 4096  # 1 MiB
    obstore.put(store, "a/b.bin", payload)
    assert bytes(obstore.get(store, "a/b.bin").bytes()) == payload
    assert bytes(obstore.get_range(store, "a/b.bin", start=1000, length=24)) == payload[1000:1024]
    fs = s3fs.S3FileSystem(endpoint_url=s3_server.endpoint)
    assert fs.cat(f"{bucket}/a/b.bin") == payload
    assert [o["path"] for o in obstore.list(store).collect()] == ["a/b.bin"]


def _median_get(store, n: int = 15) -> float:
    import obstore

    times = []
    for _ in range(n):
        start = time.perf_counter()
        obstore.get_range(store, "small", start=0, length=64)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def test_the_proxy_adds_its_delay_to_every_request(s3_server: Server, bucket: str) -> None:
    import obstore

    obstore.put(_store(s3_server.endpoint, bucket), "small", b"x" * 4096)
    target = (s3_server.host, s3_server.port)
    with latency(target, 0.0) as none:
        base = _median_get(_store(none.endpoint, bucket))
    with latency(target, 0.030) as slow:
        delayed = _median_get(_store(slow.endpoint, bucket))
    added = delayed - base
    # each GET pays one 30 ms delay on a kept-alive connection, not two (a new connection
    # per request); timers and a loaded machine add a little
    assert 0.027 <= added < 0.055, (base, delayed)
