"""analysis/ asks a point's backend for its exports and never names a backend itself.

A string equal to a registered backend name in an analysis module (a constant, or
a comparison against one) is knowledge of a format that belongs to that backend
(:meth:`iotune.backends.base.Backend.exports`).  Read with ``ast``: docstrings and
longer strings that merely mention a format are not names.
"""

from __future__ import annotations

import ast
from pathlib import Path

from iotune.backends import backend_names

ANALYSIS = Path(__file__).resolve().parents[2] / "iotune" / "analysis"


def named_backends(source: str, names: set[str]) -> list[tuple[int, str]]:
    """``(line, name)`` of every string constant in ``source`` that is a backend name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            found.append((node.lineno, node.value))
    return sorted(set(found))


def test_no_analysis_module_names_a_backend() -> None:
    names = set(backend_names())
    modules = sorted(ANALYSIS.rglob("*.py"))
    assert modules, ANALYSIS
    found = [
        f"{path.relative_to(ANALYSIS.parents[1])}:{line}: {name!r}"
        for path in modules
        for line, name in named_backends(path.read_text(), names)
    ]
    assert found == [], "analysis/ names backends; ask get_backend(name).exports():\n" + "\n".join(
        found
    )


def test_the_scan_finds_a_name_in_a_constant_and_a_comparison() -> None:
    source = 'KNOWN = ("posix",)\n\n\ndef f(s):\n    return s.get("backend") == "zarr"\n'
    assert named_backends(source, {"posix", "zarr", "h5py"}) == [(1, "posix"), (5, "zarr")]
    assert named_backends('"""Exports for zarr and posix."""\n', {"posix", "zarr"}) == []
