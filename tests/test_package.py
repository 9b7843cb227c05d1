"""``import iotune``: cheap, and what it offers is what ``dir`` and type checkers see."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import iotune

ROOT = Path(__file__).resolve().parents[1]


def test_dir_lists_the_api_and_the_errors_and_nothing_else() -> None:
    code = (
        "import sys, iotune; print(dir(iotune)); "
        "print(sorted({'xarray', 'dask'} & set(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, heavy = proc.stdout.splitlines()
    shown = ast.literal_eval(names)
    for name in ("run", "tune", "recommend", "open_results", "load_spec", "UsageError"):
        assert name in shown
    assert {"IotuneError", "SpecError", "IotuneWarning", "StripingWarning"} <= set(shown)
    assert not {"Any", "importlib", "sys", "annotations"} & set(shown)
    assert heavy == "[]"  # import iotune imports neither xarray nor dask


def test_every_public_name_resolves_and_the_type_checking_block_names_them_all() -> None:
    for name in iotune.__all__:
        assert getattr(iotune, name) is not None, name
    tree = ast.parse((ROOT / "iotune" / "__init__.py").read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If))  # if _TYPE_CHECKING:
    typed = {
        a.asname or a.name
        for n in ast.walk(block)
        if isinstance(n, ast.ImportFrom)
        for a in n.names
    }
    assert typed == set(iotune.__all__) - {"__version__"}


def test_the_version_has_one_source_and_the_marker_is_packaged() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "iotune.__version__"}
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["iotune"]
    assert (ROOT / "iotune" / "py.typed").exists()
    proc = subprocess.run(
        [sys.executable, "-m", "iotune", "--version"], capture_output=True, text=True, check=True
    )
    assert proc.stdout == f"iotune {iotune.__version__}\n"


def test_every_exception_lives_in_errors_and_is_public() -> None:
    """One module holds iotune's exceptions and warnings, and ``import iotune`` names them all."""
    import inspect

    from iotune.core import errors

    defined = {
        name
        for name, obj in vars(errors).items()
        if inspect.isclass(obj)
        and issubclass(obj, BaseException)
        and obj.__module__ == errors.__name__
    }
    assert defined <= set(dir(iotune))
    outside = []
    for path in sorted((ROOT / "iotune").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            public = isinstance(node, ast.ClassDef) and not node.name.startswith("_")
            bases = {getattr(b, "id", getattr(b, "attr", "")) for b in getattr(node, "bases", [])}
            if public and path.name != "errors.py" and bases & (defined | {"Exception", "Warning"}):
                outside.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert outside == []
