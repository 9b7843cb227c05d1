"""environment.yml and binder/environment.yml agree with pyproject.toml's dependencies."""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
#: pip requirement name (lower case, extras included) -> conda-forge package names
CONDA_NAMES = {
    "netcdf4": ["netcdf4"],
    "dask[distributed]": ["dask", "distributed"],
    "matplotlib": ["matplotlib-base"],  # matplotlib without a GUI toolkit
    "darshan": ["pydarshan"],
}
#: conda names that are not Python requirements of iotune
NOT_REQUIREMENTS = {"python", "pip"}
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.\-]+(?:\[[^\]]*\])?)\s*([^;]*)")
_CONDA = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$")


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def as_conda(requirements: list[str]) -> dict[str, str]:
    """``{conda name: version specifier}`` for pip requirements (markers dropped)."""
    out = {}
    for req in requirements:
        name, spec = _REQUIREMENT.match(req).groups()
        for conda in CONDA_NAMES.get(name.lower(), [name.lower()]):
            out[conda] = spec.strip()
    return out


def conda_deps(path: Path) -> dict[str, str]:
    data = yaml.safe_load(path.read_text())
    assert data["channels"] == ["conda-forge"], f"{path}: use conda-forge only"
    deps = {}
    for item in data["dependencies"]:
        if isinstance(item, str):
            name, spec = _CONDA.match(item).groups()
            deps[name.lower()] = spec.strip()
    return deps


def requirements(deps: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in deps.items() if k not in NOT_REQUIREMENTS}


def test_root_environment_is_pyproject_with_dev_extra() -> None:
    project = pyproject()
    wanted = as_conda(project["dependencies"] + project["optional-dependencies"]["dev"])
    have = requirements(conda_deps(ROOT / "environment.yml"))
    assert sorted(have) == sorted(wanted)
    assert have == wanted, "the lower bounds differ from pyproject.toml's"


def test_root_environment_installs_iotune_itself() -> None:
    data = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(item["pip"] for item in data["dependencies"] if isinstance(item, dict))
    assert "-e ." in pip


def test_binder_environment_is_the_runtime_dependencies() -> None:
    wanted = as_conda(pyproject()["dependencies"])
    have = requirements(conda_deps(ROOT / "binder" / "environment.yml"))
    assert sorted(have) == sorted(wanted)


def _release(version: str) -> str:
    """A PyPI version as conda-forge publishes it: no post-release part, at most 3 numbers."""
    numbers = re.match(r"\d+(?:\.\d+)*", version).group(0).split(".")
    return ".".join(numbers[:3])


def test_binder_is_pinned_to_the_tested_versions() -> None:
    """Each runtime dependency pinned (``=X.Y.Z``) to the version installed here."""
    have = requirements(conda_deps(ROOT / "binder" / "environment.yml"))
    dist_of = {c: p for p, cs in CONDA_NAMES.items() for c in cs}
    for conda, spec in have.items():
        assert re.fullmatch(r"=\d+(\.\d+)*", spec), f"{conda}: pin with '=X.Y.Z', got {spec!r}"
        dist = re.sub(r"\[.*\]", "", dist_of.get(conda, conda)).replace("-base", "")
        try:
            installed = metadata.version(conda if conda in ("dask", "distributed") else dist)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{conda} is pinned in binder/ but not installed in this environment")
        assert spec[1:] == _release(installed), f"{conda}: binder pins {spec}, tested {installed}"


def test_binder_python_matches_pyproject() -> None:
    minimum = re.search(r">=\s*(\d+\.\d+)", pyproject()["requires-python"]).group(1)
    pinned = conda_deps(ROOT / "binder" / "environment.yml")["python"]
    assert pinned.lstrip("=") >= minimum


def test_binder_scripts_are_executable_and_start_selects_small_sizes() -> None:
    start = ROOT / "binder" / "start"
    post = ROOT / "binder" / "postBuild"
    for script in (start, post):
        assert os.access(script, os.X_OK), f"{script.name} must be executable"
    text = start.read_text()
    assert "export IOTUNE_SMALL=1" in text
    assert text.rstrip().endswith('exec "$@"')
    assert re.search(r"pip install --no-deps -e \.", post.read_text())
