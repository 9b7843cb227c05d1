"""A lean install: ``pip install iotune`` without extras runs sweeps, and each extra's
feature says in one line which extra to install (exit 2)."""

from __future__ import annotations

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
)
MPIIO_SPEC = """\
version: 1
name: lean-mpiio
workload: {shape: {time: 4, y: 64, x: 64}}
backend: mpiio
parameters: {nprocs: 1, transfer_size: 64KiB}
read: {patterns: [full]}
"""

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
    done = _run(lean, "run", str(ROOT / "sweeps" / "quick.yaml"), "-o", "out", cwd=tmp_path)
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
    ],
    ids=["tune", "darshan", "notebook", "mpiio"],
)
def test_a_feature_names_its_missing_extra(
    lean: Path, tmp_path: Path, args: list[str], extra: str, module: str
) -> None:
    (tmp_path / "mpiio.yaml").write_text(MPIIO_SPEC)
    args = [
        a.replace("SWEEPS", str(ROOT / "sweeps")).replace("NOTEBOOKS", str(ROOT / "notebooks"))
        for a in args
    ]
    done = _run(lean, *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"needs {module}" in lines[0] and f"pip install 'iotune[{extra}]'" in lines[0]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists(), "nothing may start before the refusal"
