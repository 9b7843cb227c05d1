"""environment.yml and binder/requirements.txt agree with pyproject.toml's dependencies."""

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
    "moto[server]": ["moto"],
    "gcp-storage-emulator": [],  # PyPI only: in environment.yml's pip list
}
#: conda names that are not Python requirements of iotune
NOT_REQUIREMENTS = {"python", "pip", "flask", "flask-cors"}  # flask: moto's server
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


#: the extras Binder's notebooks use (not jobqueue: no batch system there; `all` names the rest)
BINDER_EXTRAS = ("mpich", "jupyter", "search", "darshan", "objectstore")
#: dev requirements a notebook needs on Binder: 08-object-storage starts moto's S3 server
BINDER_DEV = ("moto[server]",)


def every_extra(project: dict) -> list[str]:
    extras = project["optional-dependencies"]
    return [r for name, reqs in extras.items() if name not in ("all", "dev") for r in reqs]


def test_root_environment_is_pyproject_with_every_extra() -> None:
    project = pyproject()
    wanted = as_conda(
        project["dependencies"] + every_extra(project) + project["optional-dependencies"]["dev"]
    )
    have = requirements(conda_deps(ROOT / "environment.yml"))
    assert sorted(have) == sorted(wanted)
    assert have == wanted, "the lower bounds differ from pyproject.toml's"


def test_all_extra_names_every_other_extra() -> None:
    extras = pyproject()["optional-dependencies"]
    named = extras["all"][0].split("[")[1].rstrip("]").split(",")
    assert sorted(named) == sorted(set(extras) - {"all", "dev", "mpi"})  # mpich brings mpi4py


def test_root_environment_installs_iotune_itself() -> None:
    data = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(item["pip"] for item in data["dependencies"] if isinstance(item, dict))
    assert "-e ." in pip
    assert any(p.startswith("gcp-storage-emulator>=") for p in pip)  # not on conda-forge


def binder_pins() -> dict[str, str]:
    """``{requirement name: pinned version}`` of binder/requirements.txt."""
    pins = {}
    for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, spec = _REQUIREMENT.match(line).groups()
            assert spec.startswith("=="), f"{name}: pin with '==X.Y.Z', got {spec!r}"
            pins[name.lower()] = spec[2:].strip()
    return pins


def test_binder_requirements_are_the_runtime_and_notebook_extras() -> None:
    project = pyproject()
    extras = project["optional-dependencies"]
    wanted = project["dependencies"] + [r for e in BINDER_EXTRAS for r in extras[e]]
    wanted += [r for r in extras["dev"] if _REQUIREMENT.match(r).group(1) in BINDER_DEV]
    names = {_REQUIREMENT.match(r).group(1).lower() for r in wanted}
    assert sorted(binder_pins()) == sorted(names)


def test_binder_is_pinned_to_the_tested_versions() -> None:
    """Each requirement pinned to the version installed here, the one the tests ran with."""
    for name, version in binder_pins().items():
        dist = re.sub(r"\[.*\]", "", name)
        try:
            installed = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} is pinned in binder/ but not installed in this environment")
        assert version == installed, f"{name}: binder pins {version}, tested {installed}"


def test_binder_python_matches_pyproject() -> None:
    minimum = re.search(r">=\s*(\d+\.\d+)", pyproject()["requires-python"]).group(1)
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-\d+\.\d+", runtime), runtime
    assert tuple(map(int, runtime[7:].split("."))) >= tuple(map(int, minimum.split(".")))
    assert not (ROOT / "binder" / "environment.yml").exists(), "repo2docker would prefer it"


def test_binder_scripts_are_executable_and_start_selects_small_sizes() -> None:
    start = ROOT / "binder" / "start"
    post = ROOT / "binder" / "postBuild"
    for script in (start, post):
        assert os.access(script, os.X_OK), f"{script.name} must be executable"
    text = start.read_text()
    assert "export IOTUNE_SMALL=1" in text
    assert text.rstrip().endswith('exec "$@"')
    assert re.search(r"pip install --no-deps -e \.", post.read_text())
