"""A lean install: ``pip install iotune`` without extras runs sweeps, and each extra's
feature says in one line which extra to install (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.venvs import installer

ROOT = Path(__file__).resolve().parents[1]
#: what the extras bring, none of which the core may pull in
EXTRA_DISTRIBUTIONS = (
    "jupyterlab",
    "mpich",
    "mpi4py",
    "optuna",
    "darshan",
    "papermill",
    "dask-jobqueue",
    "ipywidgets",
    "virtualizarr",
    "kerchunk",
    "icechunk",
)
MPIIO_SPEC = """\
version: 1
name: lean-mpiio
workload: {shape: {time: 4, y: 64, x: 64}}
backend: mpiio
parameters: {nprocs: 1, transfer_size: 64KiB}
read: {patterns: [full]}
"""

TINY_SPEC = """\
version: 1
name: lean-tiny
workload: {shape: {time: 8, y: 16, x: 16}}
backend: netcdf4
parameters: {chunks: [[8, 16, 16], [1, 16, 16]]}
read: {patterns: [full, timeseries], timeseries: {pixels: 4}}
measure: {repeats: 1}
"""
VIRTUAL_SPEC = """\
version: 1
name: lean-virtual
workload: {field: file, path: source.nc, variable: data}
backend: virtual
"""
SOURCE = (
    "import numpy as np, xarray as xr\n"
    "values = np.arange(8 * 16 * 16, dtype='float32').reshape(8, 16, 16)\n"
    "xr.Dataset({'data': (('time', 'y', 'x'), values)}).to_netcdf('source.nc')\n"
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` of a new virtual environment with ``pip install <repo>`` and no extras."""
    venv = tmp_path_factory.mktemp("lean") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([*installer(venv), str(ROOT)], check=True)
    return venv / "bin"


def _run(lean: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    command = [str(lean / "iotune"), *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_no_extra_is_installed(lean: Path) -> None:
    code = (
        "import importlib.metadata as m, sys\n"
        f"for d in {EXTRA_DISTRIBUTIONS!r}:\n"
        "    try: m.version(d); print(d)\n"
        "    except m.PackageNotFoundError: pass\n"
    )
    done = subprocess.run([lean / "python", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []


def test_the_quick_sweep_runs(lean: Path, tmp_path: Path) -> None:
    """`make demo`'s sweep in the core install: every codec, chunk shape and baseline of it.

    One repeat and one chunk cache: what this checks (the core install writes and reads
    each of them) does not need the demo's second repeat or cache, which took a minute.
    """
    import yaml

    spec = yaml.safe_load((ROOT / "sweeps" / "quick.yaml").read_text())
    spec["parameters"]["chunk_cache"] = "64MiB"
    spec["measure"]["repeats"] = 1
    (tmp_path / "quick.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    done = _run(lean, "run", "quick.yaml", "-o", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "results.nc").is_file()
    # `make demo` says how much faster than netCDF-C's own default layout
    assert "over the baselines" in done.stdout
    assert "library (chunks=contiguous codec=none)" in done.stdout


@pytest.mark.parametrize(
    ("args", "extra", "module"),
    [
        (["tune", "SWEEPS/quick.yaml", "-o", "out"], "search", "optuna"),
        (["darshan", "missing.darshan"], "darshan", "darshan"),
        (["notebook", "NOTEBOOKS/01-quickstart.ipynb", "-o", "out"], "jupyter", "papermill"),
        (["run", "mpiio.yaml", "-o", "out"], "mpi", "mpi4py"),
        (["run", "virtual.yaml", "-o", "out"], "virtual", "virtualizarr"),
    ],
    ids=["tune", "darshan", "notebook", "mpiio", "virtual"],
)
def test_a_feature_names_its_missing_extra(
    lean: Path, tmp_path: Path, args: list[str], extra: str, module: str
) -> None:
    (tmp_path / "mpiio.yaml").write_text(MPIIO_SPEC)
    (tmp_path / "virtual.yaml").write_text(VIRTUAL_SPEC)
    if extra == "virtual":  # the spec names a file, which must exist before the refusal
        subprocess.run([lean / "python", "-c", SOURCE], cwd=tmp_path, check=True)
    args = [
        a.replace("SWEEPS", str(ROOT / "sweeps")).replace("NOTEBOOKS", str(ROOT / "notebooks"))
        for a in args
    ]
    done = _run(lean, *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    # installed from this clone: 'iotune[search]' would fetch a released iotune instead
    assert f"needs {module}" in lines[0] and f"pip install '{ROOT}[{extra}]'" in lines[0]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists(), "nothing may start before the refusal"


def test_the_walkthrough_needs_no_extra(lean: Path, tmp_path: Path) -> None:
    """Every core command on a tiny sweep; which knobs matter (optuna) is left out in one line."""
    (tmp_path / "tiny.yaml").write_text(TINY_SPEC)
    subprocess.run([lean / "python", "-c", SOURCE], cwd=tmp_path, check=True)
    said = {}
    for args in (
        ["validate", "tiny.yaml"],
        ["plan", "tiny.yaml"],
        ["run", "tiny.yaml", "-o", "out", "--no-progress"],
        ["show", "out"],
        ["recommend", "out"],
        ["recommend", "out", "--format", "json"],
        ["plot", "out"],
        ["apply", "out", "source.nc", "-o", "target.nc", "--no-progress", "--no-measure"],
    ):
        done = _run(lean, *args, cwd=tmp_path)
        assert done.returncode == 0, f"iotune {' '.join(args)}: {done.stderr}"
        said[" ".join(args[:1] + args[2:])] = done.stdout
    missing = f"needs optuna (pip install '{ROOT}[search]')"
    knobs = [x for x in said["recommend"].splitlines() if "optuna" in x]
    assert knobs == [f"which knobs matter: {missing}"]
    found = json.loads(said["recommend --format json"])
    assert found["importance_unavailable"] == missing and found["importance"] == {}
    assert "objective: read:timeseries (the built-in default" in said["recommend"]
    assert (tmp_path / "target.nc").is_file() and list((tmp_path / "out").glob("*.png"))
