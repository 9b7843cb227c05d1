"""The contract every backend keeps, checked for each one in the registry.

A new format (built in or a plugin) is covered without editing this file:
its trials run through iotune's own trial runner, as users run them.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from iotune.backends import backend_names, get_backend
from iotune.backends.base import LaunchedBackend, Reader, SlabBackend
from iotune.core.errors import NotApplicable
from iotune.model.parameters import PARAMETERS
from iotune.model.records import TrialResult, TrialTask
from iotune.model.spec import MeasureSpec
from iotune.runner import trial as trial_module
from iotune.runner.plan import make_plan
from iotune.runner.trial import run_trial
from iotune.specfile.parse import load_spec_text
from tests.backends.test_mpiio import MISSING

SPEC = """\
version: 1
workload: {{shape: {{time: 8, y: 32, x: 32}}, dtype: float32}}
backend: {backend}
read: {{patterns: [full, spatial]}}
"""
#: backends that read a source in place (``field: file``): their workload is a netCDF4 file
#: of the same array
FROM_FILE = ("virtual", "inplace")
SOURCE = """\
version: 1
workload: {{field: file, path: "{path}", variable: data}}
backend: {backend}
read: {{patterns: [full, spatial]}}
"""
#: object-store backends run against the tests' S3 server (``storage`` fixture)
STORAGE = """\
storage: {{url: "s3://{bucket}/contract", endpoint: "{endpoint}", region: us-east-1}}
"""
#: one combination each built-in format cannot express (a plugin: none known)
INEXPRESSIBLE: dict[str, dict[str, Any]] = {
    "netcdf4": {"chunks": "contiguous", "codec": "zlib", "level": 1},
    "h5py": {"chunks": "contiguous", "codec": "zlib", "level": 1},
    "zarr": {"chunks": "auto", "shards": (8, 32, 32)},
    "memory": {"codec": "zlib", "shuffle": "bit", "level": 1},
    "mpiio": {"nprocs": 2, "layout": "fpp", "access": "block3d"},
}
BACKENDS = [
    pytest.param(b, marks=[pytest.mark.mpi] if issubclass(get_backend(b), LaunchedBackend) else [])
    for b in backend_names()
]


def _on_objects(backend: str) -> bool:
    return bool(getattr(get_backend(backend), "object_storage", False))


def _source(request: pytest.FixtureRequest) -> str:
    """A netCDF4 file of the generated workload's array, made once per session."""
    folder = request.getfixturevalue("tmp_path_factory").getbasetemp() / "contract-source"
    path = folder / "source.nc"
    if not path.exists():
        import xarray as xr

        folder.mkdir(exist_ok=True)
        values = np.random.default_rng(0).normal(size=(8, 32, 32)).astype("float32")
        encoding = {"data": {"zlib": True, "chunksizes": (2, 16, 32)}}
        xr.Dataset({"data": (("time", "y", "x"), values)}).to_netcdf(path, encoding=encoding)
    return str(path)


def _spec(backend: str, request: pytest.FixtureRequest | None = None) -> str:
    if backend in FROM_FILE:
        assert request is not None
        return SOURCE.format(backend=backend, path=_source(request))
    text = SPEC.format(backend=backend)
    if _on_objects(backend):
        assert request is not None
        server, bucket = request.getfixturevalue("s3_server"), request.getfixturevalue("bucket")
        text += STORAGE.format(bucket=bucket, endpoint=server.endpoint)
    return text


def _task(tmp_path, backend: str, request: pytest.FixtureRequest | None = None) -> TrialTask:
    sweep = load_spec_text(_spec(backend, request))
    (trial,) = make_plan(sweep).trials
    measure = MeasureSpec(repeats=2)
    return TrialTask(
        trial, sweep.workload, sweep.read, measure, str(tmp_path), storage=sweep.storage
    )


def _run(tmp_path, backend: str, request: pytest.FixtureRequest) -> TrialResult:
    cls = get_backend(backend)
    if issubclass(cls, LaunchedBackend) and MISSING:
        pytest.skip(MISSING)
    return run_trial(_task(tmp_path, backend, request))


def _objects_left(request: pytest.FixtureRequest) -> list[str]:
    import boto3

    server, bucket = request.getfixturevalue("s3_server"), request.getfixturevalue("bucket")
    client = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1")
    return [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_round_trip_is_ok_verified_and_cold(tmp_path, request, backend: str) -> None:
    result = _run(tmp_path, backend, request)
    assert result.status == "ok", result.error
    assert len(result.write) == 2 and all(w["MiBps"] > 0 for w in result.write)
    cls = get_backend(backend)
    for pattern, runs in result.reads.items():
        assert runs and all(r["MiBps"] > 0 for r in runs), pattern
        expected = "memory" if cls.in_memory else "cold"
        assert {r["cache"] for r in runs} == {expected}, pattern  # evicted, and checked
    assert list(tmp_path.iterdir()) == []  # the scratch went
    if _on_objects(backend):
        assert _objects_left(request) == []  # and so did its objects


@pytest.mark.parametrize("backend", BACKENDS)
def test_what_it_stored_is_read_back_and_recorded(tmp_path, request, backend: str) -> None:
    result = _run(tmp_path, backend, request)
    assert result.status == "ok", result.error
    assert isinstance(result.stored, dict) and result.stored
    json.dumps(result.stored)  # it goes into results.nc as JSON
    if "chunks" in get_backend(backend).parameters and not get_backend(backend).in_memory:
        assert "layout" in result.stored  # the layout the file really has, not the request


@pytest.mark.parametrize("backend", [b for b in backend_names()])
def test_resolve_gives_effective_values_or_not_applicable(request, backend: str) -> None:
    cls = get_backend(backend)
    # the same for all (a source file's for those reading one in place)
    spec = _spec(backend, request) if backend in FROM_FILE else SPEC.format(backend="memory")
    workload = load_spec_text(spec).workload
    effective, notes = cls.resolve({}, workload)
    runner = {p for p, d in PARAMETERS.items() if d.generic}
    assert set(effective) - {"hint_values"} <= set(cls.parameters) | runner
    assert all(isinstance(n, str) and n for n in notes)
    if backend in INEXPRESSIBLE:
        with pytest.raises(NotApplicable) as caught:
            cls.resolve(INEXPRESSIBLE[backend], workload)
        assert str(caught.value)  # the reason a user reads in the results


class _Spoiled(Reader):
    """A reader handing back one changed element per read: bytes that are not the file's."""

    def __init__(self, inner: Reader) -> None:
        self._inner = inner

    def read(self, selection: Any) -> np.ndarray:
        out = np.array(self._inner.read(selection), copy=True)
        flat = out.reshape(-1).view(np.uint8)
        flat[0] ^= 0xFF
        return out

    def close(self) -> None:
        self._inner.close()


@pytest.mark.parametrize(
    "backend", [b for b in backend_names() if issubclass(get_backend(b), SlabBackend)]
)
def test_changed_bytes_fail_the_trial_on_the_crc(
    tmp_path, monkeypatch, request, backend: str
) -> None:
    cls = get_backend(backend)
    original = cls.open_reader

    def open_reader(self, path, workload, params):
        return _Spoiled(original(self, path, workload, params))

    monkeypatch.setattr(cls, "open_reader", open_reader)
    monkeypatch.setattr(trial_module, "_WARMED", {backend})  # the timed read must catch it
    result = run_trial(_task(tmp_path, backend, request))
    assert result.status == "failed"
    assert "VerificationError" in result.error and "crc32" in result.error, result.error
    assert not result.reads.get("full")  # no figures from a read that returned other bytes
