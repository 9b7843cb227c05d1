"""Broken specs and contradictory options: exit code 2, one short line, no traceback.

Every case runs the real command in a subprocess (``python -m iotune``), so the
exit code, the stream and the absence of a traceback are what a user sees.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

FIXTURES = Path(__file__).parent / "fixtures" / "specs"
#: a value for ``changed_spec`` that deletes the key instead of setting it
DELETE = ...


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iotune", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def write_spec(path: Path, data: Any) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def assert_usage_error(
    proc: subprocess.CompletedProcess[str], *words: str, source: Path | None = None
) -> str:
    """Exit 2, nothing on stdout, exactly one ``iotune: error:`` line naming ``words``.

    ``source``: the spec file the line names; short is said of the rest (the tests'
    files lie in long temporary directories, a user's spec rarely does).
    """
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.endswith("\n")
    assert proc.stderr.count("\n") == 1, proc.stderr
    line = proc.stderr.rstrip("\n")
    assert line.startswith("iotune: error: ")
    assert len(line.replace(f"{source}: ", "") if source else line) < 300  # short
    for word in words:
        assert word in line, f"{word!r} not in {line!r}"
    return line


# --- the broken specs -------------------------------------------------------


@dataclass(frozen=True)
class Broken:
    """A broken spec: changes to the minimal spec, a fixture, raw bytes or no file."""

    changes: dict[str, Any] | None = None
    fixture: str | None = None
    raw: bytes | None = None
    missing: bool = False

    def materialize(self, directory: Path, changed_spec: Callable[..., Any]) -> Path:
        if self.fixture is not None:
            return FIXTURES / self.fixture
        path = directory / "spec.yaml"
        if self.missing:
            return directory / "does-not-exist.yaml"
        if self.raw is not None:
            path.write_bytes(self.raw)
            return path
        return write_spec(path, changed_spec(self.changes or {}))


def case(broken: Broken, *words: str, id: str):
    return pytest.param(broken, words, id=id)


ALLOWED_CODECS = "allowed: none, zlib, bzip2, zstd, blosc-lz4"

CASES = [
    # the kinds the acceptance criterion names
    case(
        Broken({"paramters": {"codec": "zlib"}}),
        "paramters",
        "unknown key",
        "allowed: version, name",
        id="unknown-key",
    ),
    case(
        Broken({"parameters.codec": ["none", "lzma"]}),
        "parameters.codec[1]",
        "'lzma'",
        ALLOWED_CODECS,
        id="unknown-codec",
    ),
    case(
        Broken({"parameters.chunks": [8, 16]}),
        "parameters.chunks",
        "[8, 16]",
        "rank 2",
        "rank 3",
        id="chunk-rank",
    ),
    case(
        Broken({"parameters.chunks": [[32, 16, 16], "contiguous"]}),
        "parameters.chunks[0]",
        "[32, 16, 16]",
        "'time' (32 > 16)",
        id="chunk-larger-than-data",
    ),
    case(
        Broken({"parameters.chunk_cache": "-1MiB"}),
        "parameters.chunk_cache",
        "'-1MiB'",
        "negative",
        id="negative-size",
    ),
    case(
        Broken({"workload.shape.time": -16}),
        "workload.shape.time",
        "-16",
        "allowed: >= 1",
        id="negative-shape",
    ),
    case(
        Broken({"parameters.chunk_cache": "12XB"}),
        "parameters.chunk_cache",
        "'12XB'",
        "'64MiB'",
        id="malformed-size",
    ),
    case(
        Broken({"parameters.codec": []}),
        "parameters.codec",
        "empty list",
        id="empty-parameter-list",
    ),
    case(
        Broken({"measure.repeats": "three"}),
        "measure.repeats",
        "'three'",
        "integer",
        id="wrong-type",
    ),
    case(
        Broken({"parameters.level": 30}),
        "parameters.level",
        "30",
        "<= 22",
        id="level-out-of-range",
    ),
    case(
        Broken({"parameters.codec": "zlib", "parameters.level": 15}),
        "parameters.level",
        "15",
        "zlib: 1..9",
        id="level-out-of-range-for-codec",
    ),
    case(
        Broken({"read.patterns": ["full", "diagonal"]}),
        "read.patterns[1]",
        "'diagonal'",
        "allowed: full, spatial, timeseries",
        id="unknown-pattern",
    ),
    case(
        Broken(fixture="broken/missing_workload.yaml"),
        "missing_workload.yaml",
        "workload: required",
        id="missing-workload",
    ),
    case(
        Broken({"workload.shape": DELETE}),
        "workload.shape: required",
        id="missing-shape",
    ),
    case(
        Broken(fixture="broken/malformed_yaml.yaml"),
        "malformed_yaml.yaml",
        "malformed YAML",
        "line 5",
        id="malformed-yaml",
    ),
    case(
        Broken(fixture="broken/unsupported_version.yaml"),
        "version",
        "unsupported version 2",
        "allowed: 1",
        id="unsupported-version",
    ),
    # more
    case(
        Broken({"backend": "hdf4"}),
        "backend",
        "'hdf4'",
        "allowed: netcdf4",
        id="unknown-backend",
    ),
    case(
        Broken({"workload.dtype": "complex64"}),
        "workload.dtype",
        "'complex64'",
        "allowed: int16, int32, uint16, float32, float64",
        id="unknown-dtype",
    ),
    case(
        Broken({"read.spatial": {"y": 1000}}),
        "read.spatial.y",
        "1000",
        "1..32",
        id="bad-spatial-window",
    ),
    case(
        Broken({"parameters.codec": ["zlib", "none", "zlib"]}),
        "parameters.codec",
        "'zlib'",
        "twice",
        id="duplicate-value",
    ),
    case(
        Broken({"measure.repeet": 3}),
        "measure.repeet",
        "unknown key",
        "allowed: repeats, cache, fsync",
        id="nested-unknown-key",
    ),
    case(
        Broken({"parameters.stripe_count": 4}),
        "parameters.stripe_count",
        "allowed: chunks, codec, level, shuffle, chunk_cache",
        id="parameter-unknown-to-backend",
    ),
    case(
        Broken({"parameters.shuffle": "nibble"}),
        "parameters.shuffle",
        "'nibble'",
        "allowed: none, byte, bit",
        id="unknown-shuffle",
    ),
    case(
        Broken({"measure.cache": "hot"}),
        "measure.cache",
        "'hot'",
        "allowed: cold, warm",
        id="unknown-cache-mode",
    ),
    case(
        Broken(missing=True),
        "does-not-exist.yaml",
        "cannot read spec",
        "No such file",
        id="file-does-not-exist",
    ),
    case(Broken(raw=b""), "the spec is empty", id="empty-file"),
    # found by these tests, now fixed
    case(
        Broken({"workload.shape": 64}),
        "workload.shape",
        "64",
        id="shape-is-a-number",
    ),
    case(
        Broken(raw=b"version: 1\nname: caf\xe9\n"),
        id="not-utf8",
    ),
    case(
        Broken({"read.patterns": ["full", "full"]}),
        "read.patterns",
        "'full'",
        id="duplicate-pattern",
    ),
    case(
        Broken({"baselines": ["library", "defaults"]}),
        "baselines[1]",
        "'defaults'",
        "allowed: library, dask-auto, balanced, cloud, source",
        id="unknown-baseline",
    ),
    case(
        Broken({"baselines": ["source"]}),
        "baselines[0]",
        "field: file",
        id="source-baseline-without-a-file",
    ),
    # reads through xarray
    case(
        Broken({"parameters.dask_chunks": ["storage", "tiny"]}),
        "parameters.dask_chunks[1]",
        "'tiny'",
        "allowed: none, auto, storage, or a mapping",
        id="unknown-dask-chunks",
    ),
    case(
        Broken({"parameters.dask_chunks": [{"time": 0}]}),
        "parameters.dask_chunks[0]",
        "time: 0",
        "from 1 to 16",
        id="dask-chunks-out-of-range",
    ),
    case(
        Broken({"parameters.dask_chunks": {"level": 4}}),
        "parameters.dask_chunks",
        "'level' is not a dimension",
        "(time, y, x)",
        id="dask-chunks-unknown-dim",
    ),
    case(
        Broken({"parameters.dask_threads": 0}),
        "parameters.dask_threads",
        "allowed: >= 1",
        id="dask-threads-zero",
    ),
    case(
        Broken({"backend": "posix", "parameters": {"dask_chunks": "storage"}}),
        "parameters.dask_chunks",
        "backend posix cannot be opened with xarray",
        "allowed with: netcdf4, h5py, zarr",
        id="dask-chunks-without-xarray",
    ),
]


@pytest.mark.parametrize(("broken", "words"), CASES)
def test_validate_rejects_broken_spec(tmp_path, broken, words, changed_spec):
    path = broken.materialize(tmp_path, changed_spec)
    proc = iotune("validate", path, cwd=tmp_path)
    line = assert_usage_error(proc, *words, source=path)
    assert str(path) in line  # the message names the file


def test_at_least_twelve_kinds_of_broken_spec():
    assert len([c for c in CASES if not c.marks]) >= 14


def test_valid_spec_validates(tmp_path, minimal_path):
    proc = iotune("validate", minimal_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout == f"{minimal_path}: valid sweep 'minimal': 4 grid points\n"


def test_console_script(tmp_path, changed_spec):
    script = Path(sys.executable).with_name("iotune")
    if not script.exists():
        pytest.skip("the iotune console script is not installed next to this Python")
    path = write_spec(tmp_path / "spec.yaml", changed_spec({"parameters.codec": ["lzma"]}))
    proc = subprocess.run(
        [str(script), "validate", str(path)], capture_output=True, text=True, timeout=60
    )
    assert_usage_error(proc, "parameters.codec[0]", "'lzma'")


# --- run with a broken spec: nothing created, nothing lost ------------------

RUN_CASES = [
    pytest.param(Broken({"parameters.codec": ["none", "lzma"]}), "'lzma'", id="unknown-codec"),
    pytest.param(Broken(fixture="broken/malformed_yaml.yaml"), "line 5", id="malformed-yaml"),
    pytest.param(Broken(fixture="broken/missing_workload.yaml"), "workload", id="missing-workload"),
    pytest.param(Broken({"baselines": ["cloudy"]}), "'cloudy'", id="unknown-baseline"),
    pytest.param(
        Broken({"parameters.dask_chunks": ["storage", {"time": 3, "y": "all"}]}),
        "parameters.dask_chunks[1]",
        id="bad-dask-chunks",
    ),
]


def _tree(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(directory.rglob("*"))
    }


@pytest.mark.parametrize(("broken", "word"), RUN_CASES)
def test_run_with_broken_spec_creates_nothing(tmp_path, broken, word, changed_spec):
    path = broken.materialize(tmp_path, changed_spec)
    before = _tree(tmp_path)
    proc = iotune("run", path, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert_usage_error(proc, word)
    assert not (tmp_path / "out").exists()
    assert _tree(tmp_path) == before


def test_run_with_broken_spec_and_default_output_creates_nothing(tmp_path, changed_spec):
    path = write_spec(tmp_path / "spec.yaml", changed_spec({"parameters.level": 30}))
    proc = iotune("run", path, "--no-progress", cwd=tmp_path)
    assert_usage_error(proc, "parameters.level", "30")
    assert not (tmp_path / "results").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]


@pytest.mark.parametrize(
    "flags", [[], ["--overwrite"], ["--resume"]], ids=["no-flag", "overwrite", "resume"]
)
def test_run_with_broken_spec_loses_nothing(tmp_path, flags, changed_spec):
    out = tmp_path / "out"
    out.mkdir()
    (out / "journal.jsonl").write_text('{"journal":1,"digest":"0","name":"earlier"}\n')
    (out / "results.nc").write_bytes(b"earlier results")
    (out / "notes.txt").write_text("mine")
    before = _tree(tmp_path)
    path = write_spec(tmp_path / "spec.yaml", changed_spec({"workload.dtype": "complex64"}))
    proc = iotune("run", path, "-o", out, "--no-progress", *flags, cwd=tmp_path)
    assert_usage_error(proc, "workload.dtype", "'complex64'")
    after = _tree(tmp_path)
    del after["spec.yaml"]
    assert after == before


# --- contradictory options --------------------------------------------------


def test_run_resume_and_overwrite_contradict(tmp_path, minimal_path):
    proc = iotune(
        "run", minimal_path, "-o", tmp_path / "out", "--resume", "--overwrite", cwd=tmp_path
    )
    assert_usage_error(proc, "--resume", "--overwrite")


def test_run_resume_and_overwrite_creates_nothing(tmp_path, minimal_path):
    proc = iotune(
        "run", minimal_path, "-o", tmp_path / "out", "--resume", "--overwrite", cwd=tmp_path
    )
    assert proc.returncode == 2
    assert not (tmp_path / "out").exists()


# --- grid size limit --------------------------------------------------------


@pytest.fixture
def big_spec(tmp_path, changed_spec) -> Path:
    """16 chunk shapes x 626 chunk-cache sizes = 10,016 grid points."""
    data = changed_spec(
        {
            "parameters": {
                "chunks": [[t, 32, 32] for t in range(1, 17)],
                "chunk_cache": list(range(1, 627)),
            }
        }
    )
    return write_spec(tmp_path / "big.yaml", data)


def test_plan_refuses_a_huge_grid(tmp_path, big_spec):
    proc = iotune("plan", big_spec, cwd=tmp_path)
    assert_usage_error(proc, "10,016", "10,000", "--allow-large")


def test_plan_accepts_a_huge_grid_with_yes(tmp_path, big_spec):
    proc = iotune("plan", big_spec, "--allow-large", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0] == "10016 trials (10016 grid points, 0 not applicable)"
    # a line per trial, then the forecast (the probe's model scales to the grid)
    assert lines[1 + 10_016].startswith("predicted wall time: 1 worker ")
    assert lines[-1].startswith("scratch needed: up to ")


def test_run_refuses_a_huge_grid_before_creating_anything(tmp_path, big_spec):
    proc = iotune("run", big_spec, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert_usage_error(proc, "10,016", "--allow-large")
    assert not (tmp_path / "out").exists()


def test_validate_reports_the_grid_size_of_a_huge_grid(tmp_path, big_spec):
    proc = iotune("validate", big_spec, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("10016 grid points\n")
