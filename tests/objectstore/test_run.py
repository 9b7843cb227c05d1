"""``iotune run`` on a real S3 server: every object-store backend, metered, and nothing leaked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.objectstore.conftest import KEYS, Server
from tests.objectstore.proxy import latency

SPEC = {
    "version": 1,
    "name": "s3",
    "workload": {"shape": {"time": 16, "y": 64, "x": 64}, "dtype": "int16"},
    "backend": ["object", "zarr-object", "hdf5-object", "netcdf4-object"],
    "parameters": {
        "chunks": [[4, 32, 32]],
        "client": ["obstore", "fsspec"],
        "request_concurrency": 4,
    },
    "read": {"patterns": ["full", "spatial", "timeseries"]},
    "measure": {"repeats": 1, "noise_probes": 0},
}


PRICES = {"GET": 4e-7, "PUT": 5e-6, "HEAD": 4e-7, "LIST": 5e-6, "transfer_GB": 0.09}


def write_spec(
    tmp_path: Path, endpoint: str, bucket: str, prices: dict | None = None, **changes
) -> Path:
    storage = {"url": f"s3://{bucket}/runs", "endpoint": endpoint}
    spec = SPEC | {"storage": storage | ({"prices": prices} if prices else {})} | changes
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def iotune(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = os.environ | KEYS | {"AWS_DEFAULT_REGION": "us-east-1"}
    return subprocess.run(
        [sys.executable, "-m", "iotune", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def objects(server: Server, bucket: str) -> list[str]:
    import boto3

    client = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1")
    return [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]


@pytest.fixture(scope="module")
def swept(tmp_path_factory, s3_server: Server):
    """One run of SPEC through a proxy that counts the requests it forwards."""
    import boto3

    tmp = tmp_path_factory.mktemp("s3run")
    bucket = f"iotune-run-{os.getpid()}"
    os.environ.update(KEYS)
    boto3.client("s3", endpoint_url=s3_server.endpoint, region_name="us-east-1").create_bucket(
        Bucket=bucket
    )
    with latency((s3_server.host, s3_server.port), 0.0) as proxy:
        spec = write_spec(tmp, proxy.endpoint, bucket, prices=PRICES)
        done = iotune("run", str(spec), "-o", str(tmp / "out"), "-v")
        forwarded = list(proxy.requests)
    return tmp / "out", done, forwarded, bucket


def test_every_backend_and_client_is_measured_with_its_requests(swept) -> None:
    import xarray as xr

    out, done, _forwarded, _bucket = swept
    assert done.returncode == 0, done.stderr
    ds = xr.open_dataset(out / "results.nc")
    ok = ds.status.where(ds.status == "ok", drop=True)
    measured = {
        (str(b), str(c))
        for b in ds.backend.values
        for c in ds.client.values
        if ds.status.sel(backend=b, client=c).item() == "ok"
    }
    # client is zarr-object's knob; the others measure once and say it does not apply
    assert ("zarr-object", "obstore") in measured and ("zarr-object", "fsspec") in measured
    assert {"object", "hdf5-object", "netcdf4-object"} <= {b for b, _ in measured}, ok
    gets = ds.read_requests.sel(request="GET").squeeze("repeat")
    for backend, client in measured:
        point = {"backend": backend, "client": client}
        assert (gets.sel(point) > 0).all(), point
        assert (ds.write_requests.sel(point).sel(request="PUT") > 0).all(), point
        full = ds.sel(point | {"pattern": "full"}).squeeze("repeat")
        # a cold full read fetched every stored byte, and not much more
        assert full.resident_fraction.item() == 0.0
        assert 1.0 <= full.read_over_read.item() < 1.2, point
        assert np.isfinite(full.read_ttfb_median_ms.item()) and full.read_ttfb_median_ms > 0
        assert full.read_ttfb_p99_ms.item() >= full.read_ttfb_median_ms.item()
    # a time series reads a few pixels: it fetches far more than it needs
    series = ds.read_over_read.sel(pattern="timeseries", backend="zarr-object").squeeze()
    assert (series > 10).all()
    assert ds.read_retries.max() == 0  # nothing throttled here


def test_the_counts_are_the_requests_the_store_received(swept) -> None:
    """iotune's counts agree with what the proxy in front of the server forwarded."""
    import xarray as xr

    out, _done, forwarded, _bucket = swept
    ds = xr.open_dataset(out / "results.nc")
    counted = ds.read_requests.sum().item() + ds.write_requests.sum().item()
    # the proxy also sees what no timed step makes: the pre-flight probe, the owner mark,
    # verification, listings of stored sizes, warm-ups and the removal of objects
    assert 0 < counted <= len(forwarded)
    by_method = {m: sum(1 for got, _ in forwarded if got == m) for m in ("GET", "PUT", "HEAD")}
    assert ds.read_requests.sel(request="GET").sum() <= by_method["GET"]
    assert ds.write_requests.sel(request="PUT").sum() <= by_method["PUT"]


def test_the_cost_follows_the_price_table(swept) -> None:
    import xarray as xr

    ds = xr.open_dataset(swept[0] / "results.nc")
    requests = ds.read_requests.fillna(0)
    expected = sum(requests.sel(request=k) * PRICES[k] for k in ("GET", "PUT", "HEAD", "LIST"))
    expected = expected + ds.read_bytes_fetched / 1e9 * PRICES["transfer_GB"]
    measured = ds.read_cost.notnull()
    assert measured.sum() > 0
    np.testing.assert_allclose(ds.read_cost.where(measured), expected.where(measured))
    assert float(ds.write_cost.min()) > 0  # NaN where no trial ran


def test_the_run_leaves_nothing_on_the_store_and_says_where_it_ran(
    swept, s3_server: Server
) -> None:
    import xarray as xr

    out, _done, _forwarded, bucket = swept
    assert objects(s3_server, bucket) == []
    ds = xr.open_dataset(out / "results.nc")
    assert ds.attrs["provenance_storage_bucket"] == bucket
    assert ds.attrs["provenance_storage_prefix"] == "runs"
    assert ds.attrs["provenance_storage_endpoint"].startswith("http://127.0.0.1:")
    assert ds.attrs["provenance_version_obstore"] and ds.attrs["provenance_version_s3fs"]


def test_no_credential_reaches_results_journal_or_logs(swept) -> None:
    out, done, _forwarded, _bucket = swept
    secrets = [v.encode() for v in KEYS.values()]
    texts = [done.stdout.encode(), done.stderr.encode()]
    texts += [p.read_bytes() for p in out.rglob("*") if p.is_file()]
    assert len(texts) >= 4  # the logs, results.nc and the journal at least
    for secret in secrets:
        assert not any(secret in text for text in texts), secret


def test_throttling_is_retried_and_counted(tmp_path, s3_server: Server, bucket: str) -> None:
    import xarray as xr

    spec = {
        "backend": ["object", "zarr-object"],
        "parameters": {"request_concurrency": 1, "chunks": [[16, 16, 16]]},
        "read": {"patterns": ["timeseries"]},  # 16 pixels: a GET each
    }
    with latency((s3_server.host, s3_server.port), 0.0, throttle_every=4) as proxy:
        path = write_spec(tmp_path, proxy.endpoint, bucket, **spec)
        done = iotune("run", str(path), "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    ds = xr.open_dataset(tmp_path / "out" / "results.nc").isel(chunks=0)
    assert (ds.status == "ok").all(), ds.error.values
    retried = ds.read_retries.sel(pattern="timeseries").isel(repeat=0)
    # about one GET in four answered 503 SlowDown, each sent again and counted
    assert (retried >= 2).all(), retried.values
    assert retried.sum() <= proxy.throttled
    gets = ds.read_requests.sel(request="GET", pattern="timeseries").isel(repeat=0)
    assert (gets >= 16).all()
    assert json.loads(ds.effective.sel(backend="object").item())["request_concurrency"] == 1
