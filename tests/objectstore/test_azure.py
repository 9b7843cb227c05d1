"""az:// against a real Azure blob server (Azurite, npm): ``iotune run`` and ``iotune apply``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from iotune.app import api
from iotune.cli.main import main
from tests.convert.conftest import make_cf_source
from tests.objectstore.applying import ROOT, SETTINGS, assert_same_data, stored_chunks
from tests.objectstore.conftest import Server, azure_container, azure_env

#: two chunks a variable: the emulators answer one request at a time
FEW = "chunks=40x16x24 codec=zstd level=3"

SPEC = {
    "version": 1,
    "name": "az",
    "workload": {"shape": {"time": 8, "y": 32, "x": 32}, "dtype": "int16"},
    "backend": ["object", "zarr-object", "hdf5-object"],
    "parameters": {"chunks": [[4, 16, 16]], "client": ["obstore", "fsspec"]},
    "read": {"patterns": ["full", "timeseries"]},
    "measure": {"repeats": 1, "noise_probes": 0},
}


@pytest.fixture
def container(azurite_server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new container; the account and endpoint in the environment, as a user sets them."""
    for key, value in azure_env(azurite_server).items():
        monkeypatch.setenv(key, value)
    return azure_container(azurite_server)


def blobs(container: str) -> list[str]:
    from iotune.convert.stores import Location

    where = Location.of(f"az://{container}/x", flag="test")
    return sorted(where.fs.find(container))


def test_run_on_azure_measures_the_obstore_clients(
    tmp_path: Path, azurite_server: Server, container: str
) -> None:
    import xarray as xr

    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC | {"storage": {"url": f"az://{container}/runs"}}))
    done = subprocess.run(
        [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), **dict(__import__("os").environ)},
    )
    assert done.returncode == 0, done.stderr
    ds = xr.open_dataset(tmp_path / "out" / "results.nc").squeeze("chunks")
    status = ds.status.to_series().to_dict()
    for backend in ("object", "zarr-object"):
        assert status[(backend, "obstore")] == "ok", ds.error.sel(backend=backend).values
        point = {"backend": backend, "client": "obstore", "pattern": "full"}
        assert ds.read_requests.sel(point).sel(request="GET").squeeze() > 0
    # fsspec's requests are metered on s3:// only: said, not measured wrong
    assert status[("zarr-object", "fsspec")] == "not_applicable"
    assert "meters on s3://" in str(ds.error.sel(backend="hdf5-object", client="obstore").item())
    assert blobs(container) == []  # the run removed its objects


def test_apply_to_and_from_azure(tmp_path: Path, container: str) -> None:
    source = make_cf_source(tmp_path / "source.nc")
    first, second = f"az://{container}/a.zarr", f"az://{container}/b.zarr"
    api.apply(None, source, first, settings=FEW, verify="full", progress=False)
    settings = "chunks=40x32x12 codec=zstd level=3"
    api.apply(None, first, second, settings=settings, verify="full", progress=False)
    assert_same_data(source, first)
    assert_same_data(source, second)
    assert stored_chunks(second, "tas") == ((40, 32, 12), ["ZstdCodec"])
    assert f"{container}/a.zarr.iotune-journal" in blobs(container)


def test_a_missing_container_is_one_line(
    tmp_path: Path, container: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_cf_source(tmp_path / "source.nc")
    target = f"az://no-{container}/a.zarr"
    assert main(["apply", "--settings", SETTINGS, "--no-progress", str(source), "-o", target]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not exist" in err, err
