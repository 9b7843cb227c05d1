"""Binder: an environment built from ``binder/`` alone runs every notebook within 2 GiB.

repo2docker installs ``binder/requirements.txt`` with pip on ``binder/runtime.txt``'s
Python, runs ``binder/postBuild`` and starts Jupyter through ``binder/start``.  The
test does the same in a new virtual environment (no dev extras, nothing from the
test's own environment), then runs each notebook through ``binder/start`` with
papermill under a 2 GiB memory limit, and records its peak memory and time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from tests.venvs import installer

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: what Binder gives a session
BINDER_MEMORY = 2 * 2**30
#: a notebook run with its own defaults (the demo size) aims for a minute
RUN_LIMIT_S = 120

#: figures a notebook draws at its defaults, beside its results (``out``)
FIGURES = {"09-your-analysis": ("vs-baselines.png", "utilisation.png", "before-after.png")}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def binder_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment built the way repo2docker builds Binder's, from binder/ only."""
    venv = tmp_path_factory.mktemp("binder") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    requirements = ROOT / "binder" / "requirements.txt"
    subprocess.run([*installer(venv), "-r", str(requirements)], check=True)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    subprocess.run([str(ROOT / "binder" / "postBuild")], cwd=ROOT, env=env, check=True)
    return venv / "bin" / "python"


def test_the_environment_has_no_dev_tools_and_imports_iotune_from_here(
    binder_python: Path,
) -> None:
    code = (
        "import importlib.util as u, iotune; print(iotune.__file__); "
        "print([m for m in ('pytest', 'ruff', 'playwright') if u.find_spec(m)])"
    )
    done = subprocess.run([binder_python, "-c", code], capture_output=True, text=True, check=True)
    where, dev = done.stdout.splitlines()
    assert Path(where).is_relative_to(ROOT / "iotune")
    assert dev == "[]"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_within_binder_memory(
    notebook: Path, binder_python: Path, tmp_path: Path
) -> None:
    limit_dir = Path(f"/sys/fs/cgroup/memory/iotune-binder-{os.getpid()}-{notebook.stem}")
    method, prefix = memory_limit_wrapper(BINDER_MEMORY, limit_dir)
    executed = tmp_path / notebook.name
    papermill = [str(binder_python), "-m", "papermill", "--no-progress-bar", "--cwd"]
    command = [*prefix, str(ROOT / "binder" / "start"), *papermill, str(notebook.parent)]
    command += [str(notebook), str(executed), "-p", "out", str(tmp_path / "out")]
    if "out" not in _declared(notebook):
        command = command[:-3]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "IOTUNE_SMALL")}
    env["PATH"] = f"{binder_python.parent}{os.pathsep}{env['PATH']}"
    peak, start = [0], time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sampler = threading.Thread(target=_sample, args=(proc, peak), daemon=True)
    sampler.start()
    try:
        output, _ = proc.communicate(timeout=RUN_LIMIT_S + 60)
    finally:
        proc.kill()
        sampler.join()
        cgroup_peak = _cgroup_peak(limit_dir)
    elapsed = time.monotonic() - start
    record = {
        "notebook": notebook.name,
        "seconds": round(elapsed, 1),
        "peak_tree_rss_MiB": round(peak[0] / 2**20),
        "cgroup_peak_MiB": None if cgroup_peak is None else round(cgroup_peak / 2**20),
        "limit": method,
    }
    print(json.dumps(record))
    (tmp_path / "binder-memory.json").write_text(json.dumps(record))
    assert proc.returncode == 0, f"under {method}:\n{output.decode()[-3000:]}"
    assert elapsed < RUN_LIMIT_S, record
    assert peak[0] < BINDER_MEMORY, record
    _outputs_without_errors(executed)
    for figure in FIGURES.get(notebook.stem, ()):
        assert (tmp_path / "out" / figure).stat().st_size > 0, f"{figure} was not drawn"


def _declared(notebook: Path) -> set[str]:
    nb = nbformat.read(notebook, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    return {line.split("=")[0].split(":")[0].strip() for line in cells[0].source.splitlines()}


def _sample(proc: subprocess.Popen, peak: list[int]) -> None:
    while proc.poll() is None:
        peak[0] = max(peak[0], tree_rss(proc.pid))
        time.sleep(0.2)


def _cgroup_peak(limit_dir: Path) -> int | None:
    """The cgroup's peak charge (RSS and page cache), then the cgroup is removed."""
    if not limit_dir.exists():
        return None
    peak = int((limit_dir / "memory.max_usage_in_bytes").read_text())
    for _ in range(50):  # the last process leaves the cgroup a moment after it exits
        try:
            limit_dir.rmdir()
            break
        except OSError:
            time.sleep(0.1)
    return peak


def _outputs_without_errors(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", f"{path.name}: {out.ename}: {out.evalue}"


def memory_limit_wrapper(limit: int, v1_dir: Path) -> tuple[str, list[str]]:
    """How to run a command under ``limit`` bytes here: (method, command prefix).

    In order: a systemd scope (``systemd-run --scope -p MemoryMax``); a cgroup v1
    memory group of our own (root; RSS and page cache charged, as in Binder's
    container); else ``prlimit --as`` (address space per process; the test also
    samples the resident memory of the whole process tree, always).
    """
    probe = ["systemd-run", "--quiet", "--scope", "-p", f"MemoryMax={limit}", "true"]
    if shutil.which("systemd-run") and subprocess.run(probe, capture_output=True).returncode == 0:
        return "systemd-run --scope -p MemoryMax", probe[:-1]
    if os.geteuid() == 0 and v1_dir.parent.is_dir() and os.access(v1_dir.parent, os.W_OK):
        v1_dir.mkdir()
        (v1_dir / "memory.limit_in_bytes").write_text(str(limit))
        enter = f'echo $$ > {v1_dir}/cgroup.procs && exec "$@"'
        return f"cgroup v1 memory.limit_in_bytes ({v1_dir})", ["sh", "-c", enter, "sh"]
    if shutil.which("prlimit"):
        return "prlimit --as (per process)", ["prlimit", f"--as={limit}"]
    pytest.fail("no way to limit memory here: no systemd-run, cgroup memory or prlimit")


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        total += sum(
            int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:")
        )
    return total
