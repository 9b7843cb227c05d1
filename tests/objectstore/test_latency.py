"""Latency changes the answer: the best time-series read at 30 ms is not the one at 0 ms.

A time series of a pixel touches every chunk along time.  Chunks short in time
(8x128x128) need eight small GETs per pixel; one chunk of the whole array
(64x512x512) needs one GET but reads 32 MiB for a few hundred bytes.  When a
request costs almost nothing the small chunks win; when each costs 30 ms, a
client that sends one request at a time is better served by the large chunk,
and sending sixteen at once pays off several times more than it did.
"""

from __future__ import annotations

import pytest
import yaml

from tests.objectstore.conftest import Server
from tests.objectstore.proxy import latency
from tests.objectstore.test_run import iotune

SPEC = {
    "version": 1,
    "name": "latency",
    "workload": {"shape": {"time": 64, "y": 512, "x": 512}, "dtype": "int16"},
    "backend": "zarr-object",
    "parameters": {
        "chunks": [[8, 128, 128], [64, 512, 512]],
        "request_concurrency": [1, 16],
        "client": "obstore",
    },
    "read": {"patterns": ["timeseries"], "timeseries": {"pixels": 4}},
    "measure": {"repeats": 2, "noise_probes": 0},
}
SMALL, LARGE = "8x128x128", "64x512x512"


def _read_times(tmp_path, server: Server, bucket: str, delay: float):
    import xarray as xr

    with latency((server.host, server.port), delay) as proxy:
        spec = SPEC | {"storage": {"url": f"s3://{bucket}/lat", "endpoint": proxy.endpoint}}
        path = tmp_path / f"spec-{delay}.yaml"
        path.write_text(yaml.safe_dump(spec))
        out = tmp_path / f"out-{delay}"
        done = iotune("run", str(path), "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    ds = xr.open_dataset(out / "results.nc")
    assert (ds.status == "ok").all(), ds.error.values
    return ds.read_s.sel(pattern="timeseries").median("repeat")


@pytest.mark.slow
def test_latency_changes_the_best_time_series_read(tmp_path, s3_server: Server, bucket: str):
    near = _read_times(tmp_path, s3_server, bucket, 0.0)
    far = _read_times(tmp_path, s3_server, bucket, 0.030)

    def t(times, chunks: str, concurrency: int) -> float:
        return float(times.sel(chunks=chunks, request_concurrency=concurrency))

    # one request at a time: small chunks win near the store, the large chunk far from it
    assert t(near, SMALL, 1) < t(near, LARGE, 1), near.values
    assert t(far, LARGE, 1) < t(far, SMALL, 1), far.values
    # and requests in flight are worth far more when each one waits 30 ms
    gain_near = t(near, SMALL, 1) / t(near, SMALL, 16)
    gain_far = t(far, SMALL, 1) / t(far, SMALL, 16)
    assert gain_far > 1.5 * gain_near and gain_far > 2, (gain_near, gain_far)
