"""Shared fixtures: specs and results Datasets that several test modules build on.

Specs: ``make_spec`` and ``small_spec`` (the small netCDF4 sweep ``SMALL`` with changes),
``minimal_path``, ``minimal_spec`` and ``changed_spec`` (tests/fixtures/specs/minimal.yaml
and dotted-path edits of it).

File systems: ``tmpfs`` mounts a small (or read-only) tmpfs, skipping where that is
impossible unless ``IOTUNE_REQUIRE_TMPFS=1``.  ``torch_module``: PyTorch, or a skip (a failure
with ``IOTUNE_REQUIRE_TORCH=1``); ``xbatcher_module`` the same for xbatcher
(``IOTUNE_REQUIRE_XBATCHER=1``).

Results: ``fake_results`` (the real schema, made-up numbers), ``crafted_results`` (a known
winner, runner-up and baseline) and ``product_results`` (throughput a product of one
factor per setting, so the winner and the Pareto frontier are known).  The factories that
build Datasets carry the numbers they are built from as attributes, for the assertions.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pytest
import yaml

# the real S3 server (moto) and a fresh bucket, for every test module that stores objects
from tests.objectstore.conftest import bucket, s3_server  # noqa: F401

if TYPE_CHECKING:
    import xarray as xr

TESTS = Path(__file__).parent
MiB = 2**20

# --- specs ------------------------------------------------------------------------

SMALL = {
    "version": 1,
    "name": "small",
    "workload": {"shape": {"time": 16, "y": 64, "x": 64}, "dtype": "int16"},
    "backend": "netcdf4",
    "parameters": {"chunks": [[16, 16, 16], [1, 64, 64]], "codec": ["none", "zlib"]},
    "read": {"patterns": ["full", "spatial", "timeseries"], "timeseries": {"pixels": 4}},
    "measure": {"repeats": 2},
}


def merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def _small_spec(changes: dict[str, Any] | None = None) -> dict[str, Any]:
    """SMALL updated with ``changes`` (nested dicts merge), as a fresh dict."""
    return merge(SMALL, changes or {})


@pytest.fixture(scope="session")
def small_spec():
    """The factory ``small_spec(changes=None) -> dict``: SMALL updated with ``changes``."""
    return _small_spec


@pytest.fixture
def make_spec(tmp_path: Path):
    """Write a spec (SMALL updated with ``changes``) and return its path."""

    def make(changes: dict[str, Any] | None = None, *, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(_small_spec(changes), sort_keys=False))
        return path

    return make


MINIMAL = TESTS / "fixtures" / "specs" / "minimal.yaml"


def _minimal_spec() -> dict[str, Any]:
    """The minimal spec as a fresh dict."""
    return yaml.safe_load(MINIMAL.read_text())


def _changed_spec(changes: dict[str, Any]) -> dict[str, Any]:
    """The minimal spec with dotted paths set, or deleted where the value is ``...``."""
    data = copy.deepcopy(_minimal_spec())
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        if value is ...:
            del node[last]
        else:
            node[last] = value
    return data


@pytest.fixture(scope="session")
def minimal_path() -> Path:
    """tests/fixtures/specs/minimal.yaml: a valid spec of 4 grid points."""
    return MINIMAL


@pytest.fixture(scope="session")
def minimal_spec():
    """The factory ``minimal_spec() -> dict``: the minimal spec as a fresh dict."""
    return _minimal_spec


@pytest.fixture(scope="session")
def changed_spec():
    """The factory ``changed_spec(changes) -> dict``: the minimal spec with dotted paths
    set, e.g. ``{"workload.shape.time": 8}``; a value of ``...`` (Ellipsis) deletes the key.
    """
    return _changed_spec


# --- results Datasets -----------------------------------------------------------------

QUICK = Path(__file__).resolve().parents[1] / "sweeps" / "quick.yaml"
FAKE_SMALL = {
    "workload.shape": {"time": 16, "y": 64, "x": 64},
    "parameters.chunks": [[16, 16, 16], [1, 64, 64]],
    "parameters.codec": ["none", "zlib"],
    "read.spatial": {"time": 4, "y": 32, "x": 32},
}


def _fake_results(overrides: dict[str, Any] | None = None, *, seed: int = 0, **attrs: Any):
    """A results Dataset of the real schema with made-up numbers (no file system work).

    ``quick.yaml`` at a small size, changed by ``overrides``; every applicable point is
    ``ok`` with throughputs drawn from ``seed``.
    """
    from iotune.app.api import load_spec
    from iotune.results.dataset import to_dataset
    from iotune.runner.plan import make_plan

    sweep = load_spec(QUICK, overrides={**FAKE_SMALL, **(overrides or {})})
    ds = to_dataset(make_plan(sweep), {}, provenance={"host": f"host{seed}"})
    rng = np.random.default_rng(seed)
    ok = ds["status"] == "pending"
    ds["status"] = ds["status"].where(~ok, "ok")
    for name in ("write_MiBps", "read_MiBps", "write_s", "read_s", "ratio", "file_bytes"):
        ds[name] = ds[name].copy(data=rng.uniform(1, 1000, ds[name].shape)).where(ok)
    ds.attrs.update(attrs)
    return ds


@pytest.fixture(scope="session")
def fake_results():
    """The factory ``fake_results(overrides=None, *, seed=0, **attrs) -> xr.Dataset``."""
    return _fake_results


class CraftedResults:
    """Two swept parameters, three patterns, three repeats; the winner, runner-up and
    baseline of every metric are known.  Calling it builds the Dataset, ``changes``
    (``write=`` or a pattern name, arrays of medians) replace medians.
    """

    CHUNKS: ClassVar[list[str]] = ["contiguous", "8x16x16", "1x64x64"]
    CODECS: ClassVar[list[str]] = ["none", "zlib"]
    PATTERNS: ClassVar[list[str]] = ["full", "spatial", "timeseries"]
    SPREAD = np.array([0.95, 1.0, 1.05])  # repeats: the median is the value, +-5 %

    # Median MiB/s per (chunks, codec); contiguous + zlib is not applicable (NaN).
    WRITE = np.array([[100.0, np.nan], [80.0, 40.0], [90.0, 45.0]])
    READ: ClassVar[dict[str, np.ndarray]] = {
        "full": np.array([[200.0, np.nan], [150.0, 100.0], [180.0, 110.0]]),
        "spatial": np.array([[30.0, np.nan], [20.0, 25.0], [50.0, 60.0]]),
        "timeseries": np.array([[1.0, np.nan], [8.0, 10.0], [2.0, 1.5]]),
    }
    FILE_MIB = np.array([[1.0, np.nan], [1.0, 0.4], [1.0, 0.4]])

    def __call__(self, **changes: np.ndarray) -> xr.Dataset:
        import xarray as xr

        read = {**self.READ, **{k: v for k, v in changes.items() if k in self.READ}}
        write = changes.get("write", self.WRITE)
        dims = ("chunks", "codec")
        status = np.where(np.isnan(self.FILE_MIB), "not_applicable", "ok").astype(object)
        effective = np.empty(self.FILE_MIB.shape, dtype=object)
        for (i, j), _ in np.ndenumerate(self.FILE_MIB):
            level, shuffle = (None, "none") if self.CODECS[j] == "none" else (4, "byte")
            effective[i, j] = json.dumps(
                {
                    "backend": "netcdf4",
                    "chunks": self.CHUNKS[i],
                    "codec": self.CODECS[j],
                    "level": level,
                    "shuffle": shuffle,
                    "chunk_cache": 4 * MiB,
                }
            )
        effective[np.isnan(self.FILE_MIB)] = ""
        rmed = np.stack([read[p] for p in self.PATTERNS], axis=-1)
        return xr.Dataset(
            {
                "write_MiBps": (
                    (*dims, "repeat"),
                    write[..., None] * self.SPREAD,
                    {"units": "MiB/s"},
                ),
                "read_MiBps": (
                    (*dims, "pattern", "repeat"),
                    rmed[..., None] * self.SPREAD,
                    {"units": "MiB/s"},
                ),
                "file_bytes": (dims, self.FILE_MIB * MiB, {"units": "bytes"}),
                "ratio": (dims, 1.0 / self.FILE_MIB, {"units": "1"}),
                "status": (dims, status),
                "error": (dims, np.full(self.FILE_MIB.shape, "", dtype=object)),
                "effective": (dims, effective),
            },
            coords={
                "chunks": self.CHUNKS,
                "codec": self.CODECS,
                "pattern": self.PATTERNS,
                "repeat": [0, 1, 2],
            },
            attrs={
                "schema_version": 1,
                "name": "crafted",
                "swept": "chunks codec",
                "backends": "netcdf4",
                "fixed_parameters": json.dumps({"chunk_cache": 4 * MiB}),
                "workload": json.dumps(
                    {
                        "shape": {"time": 64, "lat": 64, "lon": 64},
                        "dtype": "int16",
                        "field": "smooth",
                    }
                ),
            },
        )


@pytest.fixture(scope="session")
def crafted_results() -> CraftedResults:
    """Builds the crafted results of recommendations: ``crafted_results(**changes)``.

    Its attributes (``READ``, ``SPREAD`` ...) are the numbers the Dataset is made of.
    """
    return CraftedResults()


class ProductResults:
    """Throughput is the product of one factor per setting, so the winner is known:
    64x32x32 / none / 64MiB.  Repeats are 0.9x and 1.1x the value, so the median is the
    value.  Calling it builds the Dataset (one point, ``FAILED``, failed).
    """

    CHUNKS: ClassVar[list[str]] = ["contiguous", "auto", "64x32x32"]
    CODECS: ClassVar[list[str]] = ["none", "zlib", "blosc-lz4", "zstd"]
    CACHES: ClassVar[list[int]] = [2**20, 64 * 2**20]
    PATTERNS: ClassVar[list[str]] = ["full", "spatial", "timeseries"]

    CHUNK_SPEED = np.array([100.0, 200.0, 300.0])
    CODEC_SPEED = np.array([1.0, 0.3, 0.9, 0.5])
    CACHE_SPEED = np.array([1.0, 1.2])
    PATTERN_SPEED = np.array([2.0, 1.0, 0.5])
    # Stored size depends on the codec only.  At 64x32x32 / 64MiB: none (100 MiB, 360 MiB/s),
    # blosc-lz4 (40, 324) and zstd (20, 180) are Pareto-optimal; zlib (25, 108) is dominated
    # by zstd.
    CODEC_MIB = np.array([100.0, 25.0, 40.0, 20.0])
    FRONTIER: ClassVar[set[tuple[float, float]]] = {(20.0, 180.0), (40.0, 324.0), (100.0, 360.0)}
    FAILED: ClassVar[dict[str, Any]] = {
        "chunks": "contiguous",
        "codec": "zstd",
        "chunk_cache": 2**20,
    }

    def __call__(self) -> xr.Dataset:
        import xarray as xr

        speed = (
            self.CHUNK_SPEED[:, None, None]
            * self.CODEC_SPEED[None, :, None]
            * self.CACHE_SPEED[None, None, :]
        )
        spread = np.array([0.9, 1.1])
        write = speed[..., None] * spread
        read = speed[..., None, None] * self.PATTERN_SPEED[:, None] * spread
        file_bytes = np.broadcast_to(self.CODEC_MIB[None, :, None] * MiB, speed.shape).copy()
        params = ("chunks", "codec", "chunk_cache")
        ds = xr.Dataset(
            {
                "write_MiBps": (
                    (*params, "repeat"),
                    write,
                    {"units": "MiB/s", "long_name": "write throughput"},
                ),
                "read_MiBps": (
                    (*params, "pattern", "repeat"),
                    read,
                    {"units": "MiB/s", "long_name": "read throughput"},
                ),
                "file_bytes": (params, file_bytes, {"units": "bytes", "long_name": "stored size"}),
                "ratio": (params, 100 * MiB / file_bytes, {"units": "1", "long_name": "ratio"}),
                "status": (params, np.full(speed.shape, "ok", dtype=object)),
                "error": (params, np.full(speed.shape, "", dtype=object)),
            },
            coords={
                "chunks": self.CHUNKS,
                "codec": self.CODECS,
                "chunk_cache": (
                    "chunk_cache",
                    np.array(self.CACHES, dtype=np.int64),
                    {"units": "bytes"},
                ),
                "pattern": self.PATTERNS,
                "repeat": [0, 1],
            },
            attrs={"name": "demo-sweep", "schema_version": 1, "swept": " ".join(params)},
        )
        for var in ("write_MiBps", "read_MiBps", "file_bytes", "ratio"):
            ds[var].loc[self.FAILED] = np.nan
        ds["status"].loc[self.FAILED] = "failed"
        ds["error"].loc[self.FAILED] = "RuntimeError: boom"
        return ds


@pytest.fixture(scope="session")
def product_results() -> ProductResults:
    """Builds the product-of-factors results of the figures: ``product_results()``.

    Its attributes (``CHUNKS``, ``PATTERN_SPEED``, ``FRONTIER`` ...) are the numbers the
    Dataset is made of.
    """
    return ProductResults()


# --- environment ----------------------------------------------------------------------


@pytest.fixture
def tmpfs(tmp_path: Path):
    """The factory ``tmpfs(size, *, readonly=False, name="tmpfs") -> Path``: a real tmpfs
    of ``size`` (``"1536k"``, ``"8m"``) mounted at ``tmp_path / name``, unmounted afterwards.

    A real ENOSPC or EROFS, as on a full or read-only file system.  Needs root: skips
    otherwise; skips when mounting fails too, unless ``IOTUNE_REQUIRE_TMPFS=1``, which
    makes that a failure.
    """
    mounted: list[Path] = []

    def mount(size: str, *, readonly: bool = False, name: str = "tmpfs") -> Path:
        target = tmp_path / name
        target.mkdir()
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root")
        options = f"ro,size={size}" if readonly else f"size={size}"
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            if os.environ.get("IOTUNE_REQUIRE_TMPFS") == "1":
                pytest.fail(f"cannot mount a tmpfs: {done.stderr.strip()}")
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(target)
        return target

    yield mount
    for target in reversed(mounted):
        subprocess.run(["umount", "-l", str(target)], check=True)


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory):
    """A device calibration cached on this machine must not leak into the tests."""
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if saved is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = saved


# --- order under pytest-xdist ---------------------------------------------------------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadfile`` the files with the most ``slow`` tests come first.

    pytest-xdist hands whole files to its workers in collection order (with
    ``--no-loadscope-reorder``, as ``make test`` runs it; by default it orders them by
    their number of tests, which put the few-but-long files, the notebooks, the
    walkthrough, the stop tests, last): the longest first, so that no long file starts
    when the other worker is nearly done and leaves it idle.  The order inside a file
    stays as written; without xdist nothing moves.
    """
    if config.getoption("dist", "no") not in ("loadfile", "loadscope", "loadgroup"):
        return
    weight: dict[str, int] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        weight[path] = weight.get(path, 0) + (item.get_closest_marker("slow") is not None)
    items.sort(key=lambda item: -weight[item.nodeid.split("::")[0]])


@pytest.fixture(scope="session")
def torch_module():
    """PyTorch, for the tests of the batches pattern's torch loader.

    Skips with the reason where it is not installed, unless ``IOTUNE_REQUIRE_TORCH=1``,
    which makes that a failure.
    """
    try:
        import torch
    except ImportError as err:
        if os.environ.get("IOTUNE_REQUIRE_TORCH") == "1":
            pytest.fail(f"IOTUNE_REQUIRE_TORCH=1 but torch cannot be imported: {err}")
        pytest.skip(f"PyTorch is not installed (pip install torch): {err}")
    return torch


@pytest.fixture(scope="session")
def decision_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real sweep of the three ways of reading a small CF netCDF file: its results folder.

    The file (2 MiB of float32, 1x64x128 zlib chunks, CF time and units) is read in place
    (the inplace backend: the file itself opened with xarray's netcdf4 engine), through
    VirtualiZarr's references (the virtual backend) and rewritten to Zarr at 64x16x16,
    three repeats of the full and timeseries patterns; the decision's tests share it.
    """
    import subprocess
    import sys

    import numpy as np
    import xarray as xr
    import yaml

    folder = tmp_path_factory.mktemp("decision")
    values = np.random.default_rng(0).normal(280, 5, (64, 64, 128)).astype("f4")
    xr.Dataset(
        {"tas": (("time", "lat", "lon"), values, {"units": "K"})},
        coords={
            "time": ("time", np.arange(64.0), {"units": "days since 2000-01-01"}),
            "lat": np.linspace(-80, 80, 64),
            "lon": np.arange(128) * 2.8,
        },
    ).to_netcdf(
        folder / "tas.nc",
        encoding={"tas": {"zlib": True, "complevel": 1, "chunksizes": (1, 64, 128)}},
    )
    spec = {
        "version": 1,
        "name": "decide",
        "workload": {"field": "file", "path": "tas.nc", "variable": "tas"},
        "backend": ["inplace", "virtual", "zarr"],
        "parameters": {"chunks": [[64, 16, 16]]},
        "compare": ["in-place", "references", "rewrite"],
        "read": {"patterns": ["full", "timeseries"]},
        "measure": {"repeats": 3, "noise_probes": 0},
    }
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    cmd = [sys.executable, "-m", "iotune", "run", "spec.yaml", "-o", "out", "--no-progress"]
    proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder / "out"


@pytest.fixture(scope="session")
def xbatcher_module():
    """xbatcher, for the tests of the batches pattern's xbatcher loader.

    Skips with the reason where it is not installed, unless ``IOTUNE_REQUIRE_XBATCHER=1``,
    which makes that a failure (CI installs it with the ``xbatcher`` extra).
    """
    try:
        import xbatcher
    except ImportError as err:
        if os.environ.get("IOTUNE_REQUIRE_XBATCHER") == "1":
            pytest.fail(f"IOTUNE_REQUIRE_XBATCHER=1 but xbatcher cannot be imported: {err}")
        pytest.skip(f"xbatcher is not installed (pip install 'iotune[xbatcher]'): {err}")
    return xbatcher
