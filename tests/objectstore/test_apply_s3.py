"""``iotune apply`` with sources and targets on a real S3 server (moto): convert, kill, resume."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import boto3
import pytest

from iotune.app import api
from iotune.cli.main import main
from tests.convert.conftest import make_cf_source
from tests.objectstore.applying import SETTINGS, assert_same_data, run_cli, stored_chunks
from tests.objectstore.conftest import KEYS, Server


@pytest.fixture
def s3(s3_server: Server, bucket: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, object]:
    """A bucket, the endpoint in the environment as a user sets it, and a boto3 client."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    return bucket, boto3.client("s3", endpoint_url=s3_server.endpoint, region_name="us-east-1")


def keys(client, bucket: str) -> list[str]:
    found = client.list_objects_v2(Bucket=bucket).get("Contents", [])
    return sorted(o["Key"] for o in found)


def test_a_local_netcdf_file_to_a_zarr_store_on_s3(tmp_path: Path, s3) -> None:
    bucket, client = s3
    source = make_cf_source(tmp_path / "source.nc")
    target = f"s3://{bucket}/out/dst.zarr"
    report = api.apply(None, source, target, settings=SETTINGS, verify="full", progress=False)
    assert_same_data(source, target)
    assert stored_chunks(target, "tas") == ((20, 16, 12), ["ZstdCodec"])
    assert report.target == target and report.bytes_after > 0
    found = keys(client, bucket)
    # the journal stays as the record; the held root metadata became the store's
    assert "out/dst.zarr.iotune-journal" in found and "out/dst.zarr/zarr.json" in found
    assert not any(k.endswith(".iotune-partial") for k in found)


@pytest.mark.slow
def test_a_zarr_store_on_s3_rechunked_on_s3_and_a_netcdf_object(
    tmp_path: Path, s3, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line on store URLs; a netCDF object is read by byte ranges."""
    bucket, client = s3
    source = make_cf_source(tmp_path / "source.nc")
    client.upload_file(str(source), bucket, "in/source.nc")
    first, second = f"s3://{bucket}/a.zarr", f"s3://{bucket}/b.zarr"
    options = ["--no-progress", "--verify", "full", "--max-mem", "400KB", "--format", "json"]
    netcdf_object = f"s3://{bucket}/in/source.nc"
    assert main(["apply", "--settings", SETTINGS, *options, netcdf_object, "-o", first]) == 0
    capsys.readouterr()
    settings = "chunks=40x8x12 codec=zstd level=3"
    assert main(["apply", "--settings", settings, *options, first, "-o", second]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["source"] == first and report["regions"] == 1
    assert_same_data(source, first)
    assert_same_data(source, second)
    assert stored_chunks(second, "pr") == ((40, 8, 12), ["ZstdCodec"])
    assert stored_chunks(first, "pr") == ((20, 16, 12), ["ZstdCodec"])


def written(client, bucket: str, key: str) -> list[int]:
    try:
        text = client.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
    except client.exceptions.NoSuchKey:
        return []
    return [json.loads(line)["written"] for line in text.splitlines()[1:] if line.endswith("}")]


@pytest.mark.slow
def test_kill_half_way_then_resume_on_s3(
    tmp_path: Path, s3, s3_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    bucket, client = s3
    source = make_cf_source(tmp_path / "source.nc", time=64)
    target, journal = f"s3://{bucket}/out.zarr", "out.zarr.iotune-journal"
    env = KEYS | {"AWS_ENDPOINT_URL": s3_server.endpoint, "AWS_DEFAULT_REGION": "us-east-1"}
    # one chunk per variable and region: regions of 4 rows (two copies fit 60 KB)
    options = ["--settings", "chunks=4x32x24 codec=zstd level=3", "--max-mem", "60KB"]
    killed = run_cli(*options, str(source), "-o", target, env=env, delay=0.2)
    deadline = time.monotonic() + 60
    while len(written(client, bucket, journal)) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    before = written(client, bucket, journal)
    total = 64 // 4 // 1  # regions of one chunk row: 60 KB holds two copies of 4 rows
    assert 3 <= len(before) < total
    found = keys(client, bucket)
    # not a store yet: no root metadata, held beside it
    assert "out.zarr/zarr.json" not in found and "out.zarr.iotune-partial" in found
    assert main(["apply", *options, "--no-progress", str(source), "-o", target]) == 2
    assert "--resume" in capsys.readouterr().err
    again = run_cli(*options, "--resume", "--verify", "full", str(source), "-o", target, env=env)
    assert again.wait(120) == 0, again.stderr.read()  # type: ignore[union-attr]
    after = written(client, bucket, journal)
    assert sorted(after) == list(range(total))  # every region once: none written twice
    assert after[: len(before)] == before
    assert_same_data(source, target)
    assert "already written" in again.stdout.read()  # type: ignore[union-attr]


def test_bad_store_inputs_exit_2_with_one_line_and_nothing_created_overwrite_replaces(
    tmp_path: Path, s3, capsys: pytest.CaptureFixture[str]
) -> None:
    bucket, client = s3
    source = make_cf_source(tmp_path / "source.nc")
    taken = f"s3://{bucket}/taken.zarr"
    api.apply(None, source, taken, settings=SETTINGS, progress=False)
    cases = [
        [f"s3://no-such-bucket-{bucket}/in.nc", "-o", str(tmp_path / "a.zarr")],
        [f"s3://{bucket}/missing.nc", "-o", str(tmp_path / "b.zarr")],
        [str(source), "-o", f"s3://no-such-bucket-{bucket}/c.zarr"],
        [str(source), "-o", f"s3://{bucket}/taken.zarr"],
        [str(source), "-o", f"s3://{bucket}/d.nc"],  # netCDF is written locally only
        [str(source), "-o", f"s3://{bucket}/d.h5"],  # and HDF5
        [str(source), "-o", f"s3://{bucket}"],  # names no object
    ]
    before, local = keys(client, bucket), sorted(p.name for p in tmp_path.iterdir())
    for args in cases:
        assert main(["apply", "--settings", SETTINGS, "--no-progress", *args]) == 2, args
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert keys(client, bucket) == before
        assert sorted(p.name for p in tmp_path.iterdir()) == local
    # --overwrite replaces it
    api.apply(None, source, taken, settings="chunks=40x8x8", overwrite=True, progress=False)
    assert stored_chunks(taken, "tas") == ((40, 8, 8), [])
    assert_same_data(source, taken)


#: every knob the Zarr writer carries, each value of the choice knobs across the two
ZARR_ON_S3 = [
    "shards=4x8x8 shard_index=start codec=zstd level=3 write_empty_chunks=off",
    "shards=none codec=zlib level=1 shuffle=byte quantize=bitround:10",
    "shards=4x8x8 shard_index=end codec=none write_empty_chunks=on",
]


@pytest.mark.parametrize("asked", ZARR_ON_S3)
def test_a_zarr_store_on_s3_reads_back_its_knobs_as_asked(tmp_path: Path, s3, asked: str) -> None:
    """The object-store side of tests/convert/test_knob_roundtrip.py: the same writer, read
    back from the bucket."""
    import netCDF4
    import numpy as np

    from iotune.backends import get_backend

    bucket, _client = s3
    source = tmp_path / "source.nc"
    with netCDF4.Dataset(source, "w") as nc:
        for dim in ("t", "y", "x"):
            nc.createDimension(dim, 8)
        values = np.arange(512, dtype="f4").reshape(8, 8, 8) + 0.5
        values[:4] = np.nan  # chunks equal to the fill value: stored or not
        nc.createVariable("v", "f4", ("t", "y", "x"))[:] = values
    target = f"s3://{bucket}/knobs-{ZARR_ON_S3.index(asked)}.zarr"
    settings = f"backend=zarr chunks=4x4x4 {asked}"
    api.apply(
        None, source, target, settings=settings, variables=["v"], progress=False, measure=False
    )
    found = get_backend("zarr").apply_target().read_back(target, "v")  # type: ignore[union-attr]
    for knob, value in (item.split("=") for item in asked.split()):
        assert str(found[knob]) == value, (knob, found)
