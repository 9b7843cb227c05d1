"""requirements/lock.txt is compiled from this pyproject.toml, pins every package to one
version (pip resolves without backtracking), and agrees with binder/; the venv stamps
change only with what each venv installs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)\s*(?:;\s*(.+))?$")
#: the platform the tests and the lock's users run on (markers evaluated for it)
LINUX_311 = {"sys_platform": "linux", "python_version": "3.11", "platform_system": "Linux"}


def lock_pins() -> list[tuple[str, str, str | None]]:
    """``(normalised name, version, marker)`` for each requirement line of the lock."""
    pins = []
    for raw in LOCK.read_text().splitlines():
        line = raw.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        found = _PIN.match(line)
        assert found, f"{LOCK.name}: {line!r} is not 'name==version[; marker]'"
        name, version, marker = found.groups()
        pins.append((re.sub(r"[-_.]+", "-", name).lower(), version, marker))
    return pins


def pinned_here() -> dict[str, str]:
    """``{name: version}`` that pip installs from the lock on Linux with Python 3.11."""
    here = {}
    for name, version, marker in lock_pins():
        if marker is None or Marker(marker).evaluate({**_default_env(), **LINUX_311}):
            assert name not in here, f"{name} is pinned twice for Linux and Python 3.11"
            here[name] = version
    return here


def _default_env() -> dict[str, str]:
    from packaging.markers import default_environment

    return dict(default_environment())


def project_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [*project["dependencies"]]
    reqs += [r for extra in project["optional-dependencies"].values() for r in extra]
    return [Requirement(r) for r in reqs if not r.startswith("iotune[")]


def checkout_copy(tmp_path: Path) -> Path:
    """pyproject.toml, the lock and tools/ in a new folder, as a checkout has them."""
    (tmp_path / "requirements").mkdir()
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copy(LOCK, tmp_path / "requirements")
    shutil.copytree(
        ROOT / "tools", tmp_path / "tools", ignore=shutil.ignore_patterns("__pycache__")
    )
    return tmp_path


def run_tool(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(root / "tools" / args[0]), *args[1:]]
    return subprocess.run(command, cwd=root, capture_output=True, text=True)


def test_the_lock_is_compiled_from_this_pyproject() -> None:
    done = run_tool(ROOT, "check_lock.py")
    assert done.returncode == 0, done.stderr


def test_a_changed_dependency_fails_the_check_and_names_the_fix(tmp_path: Path) -> None:
    root = checkout_copy(tmp_path)
    assert run_tool(root, "check_lock.py").returncode == 0
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"tqdm>=4.66",', '"tqdm>=4.67",'))
    done = run_tool(root, "check_lock.py")
    assert done.returncode == 1
    assert "out of date" in done.stderr and "make lock" in done.stderr


def test_every_requirement_is_pinned_within_its_range() -> None:
    here = pinned_here()
    for req in project_requirements():
        if req.marker is not None and not req.marker.evaluate({**_default_env(), **LINUX_311}):
            continue
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in here, f"{req.name} is in pyproject.toml but not in {LOCK.name}"
        assert req.specifier.contains(here[name], prereleases=True), (
            f"{req.name}: the lock pins {here[name]}, pyproject asks {req.specifier}"
        )


def test_binder_pins_the_lock_s_versions() -> None:
    here = pinned_here()
    for raw in (ROOT / "binder" / "requirements.txt").read_text().splitlines():
        line = raw.split("#")[0].strip()
        if not line:
            continue
        req = Requirement(line)
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        pinned = str(req.specifier).removeprefix("==")
        assert here.get(name) == pinned, (
            f"{req.name}: binder pins {pinned}, the lock {here.get(name)}"
        )


@pytest.mark.parametrize(
    ("edit", "core_moves", "all_moves"),
    [
        (("pyproject.toml", '"tqdm>=4.66",', '"tqdm>=4.67",'), True, True),
        (("pyproject.toml", '"optuna>=4"', '"optuna>=4.1"'), False, True),
        (("requirements/lock.txt", "\n", "\n\n"), True, True),
    ],
    ids=["core-dependency", "extra", "lock"],
)
def test_a_venv_stamp_moves_only_with_what_it_installs(
    tmp_path: Path, edit: tuple[str, str, str], core_moves: bool, all_moves: bool
) -> None:
    root = checkout_copy(tmp_path)
    before = {m: run_tool(root, "deps_hash.py", m).stdout for m in ("core", "all")}
    path, old, new = edit
    text = (root / path).read_text()
    assert old in text
    (root / path).write_text(text.replace(old, new, 1))
    after = {m: run_tool(root, "deps_hash.py", m).stdout for m in ("core", "all")}
    assert re.fullmatch(r"[0-9a-f]{12}\n", after["core"])
    assert (before["core"] != after["core"]) is core_moves
    assert (before["all"] != after["all"]) is all_moves
