"""``read.patterns`` entries that call the user's code, checked without running any of it.

The module is found with :class:`importlib.machinery.PathFinder` (the spec's
directory first, then the environment's path), never imported: importing runs
the module's top level, and user code runs in trial processes only.  The
function is found in the source with :mod:`ast`: a top-level ``def``, class,
assignment or import of that name.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path

from iotune.model.checks import fail, mapping
from iotune.model.userpatterns import UserPattern

KEYS = ("name", "call", "script", "function")


def parse_user_pattern(
    entry: Mapping[str, object], where: str, *, base: Path | None, taken: tuple[str, ...]
) -> UserPattern:
    """Validate one ``{name, call}`` or ``{name, script, function}`` entry and find its code.

    Parameters
    ----------
    entry
        The entry as read from YAML.
    where
        Its field path, e.g. ``read.patterns[1]``.
    base
        The spec's directory (None: the working directory).
    taken
        Names already used: the built-in patterns and the entries before this one.
    """
    data = mapping(entry, where, KEYS)
    name = data.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        allowed = "give an identifier, e.g. climatology"
        raise fail(f"{where}.name", f"{name!r} is not allowed; {allowed}")
    if name in taken:
        raise fail(f"{where}.name", f"{name!r} is taken; not allowed: {', '.join(taken)}")
    if ("call" in data) == ("script" in data):
        raise fail(where, f"{dict(data)!r}: give exactly one of call and script")
    for key in ("call", "script", "function"):
        if key in data and not isinstance(data[key], str):
            raise fail(f"{where}.{key}", f"expected a string, got {data[key]!r}")
    folder = (base or Path.cwd()).resolve()
    try:
        pattern = UserPattern.from_dict(dict(data), base=str(folder))
    except ValueError as err:
        key = "call" if "call" in data else "script" if "function" in data else "function"
        example = "call: 'myanalysis:monthly_mean'" if key == "call" else f"{key}: run"
        raise fail(f"{where}.{key}", f"{err}; e.g. {example}") from None
    if pattern.call is not None:
        _check_call(pattern, f"{where}.call", folder)
    else:
        _check_script(pattern, f"{where}.script", folder)
    return pattern


def _check_call(pattern: UserPattern, where: str, folder: Path) -> None:
    assert pattern.module is not None
    spec = find_module(pattern.module, folder)
    if spec is None:
        raise fail(
            where,
            f"{pattern.call!r}: no module {pattern.module!r} in {folder} or the environment",
        )
    if spec.origin and spec.origin.endswith(".py"):  # a compiled module has no source to read
        _check_defines(Path(spec.origin), pattern, where)


def _check_script(pattern: UserPattern, where: str, folder: Path) -> None:
    path = pattern.script_path
    assert path is not None
    if not path.is_file():
        raise fail(where, f"{pattern.script!r}: no such file in {folder}")
    _check_defines(path, pattern, where)


def find_module(name: str, folder: Path) -> ModuleSpec | None:
    """Where ``name`` (dotted) would be imported from, without importing it or its parents."""
    paths: list[str] | None = [str(folder), *sys.path]
    spec: ModuleSpec | None = None
    for part in name.split("."):
        if paths is None:  # the parent is a plain module: it has no submodules
            return None
        spec = PathFinder.find_spec(part, paths)
        if spec is None:
            return None
        locations = spec.submodule_search_locations
        paths = list(locations) if locations is not None else None
    return spec


def _check_defines(path: Path, pattern: UserPattern, where: str) -> None:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as err:
        raise fail(where, f"{pattern.describe()!r}: cannot read {path}: {err}") from None
    except SyntaxError as err:
        raise fail(
            where, f"{pattern.describe()!r}: {path.name} line {err.lineno}: {err.msg}"
        ) from None
    names = top_level_names(tree)
    if pattern.attribute not in names:
        shown = ", ".join(sorted(n for n in names if not n.startswith("_"))) or "nothing"
        raise fail(
            where,
            f"{pattern.describe()!r}: {path.name} defines no top-level {pattern.attribute!r} "
            f"(it defines: {shown})",
        )


def top_level_names(tree: ast.Module) -> set[str]:
    """Names a module's top level binds: functions, classes, assignments, imports.

    Statements under a top-level ``if``/``try``/``with`` count too (``try: from
    fast import f`` / ``except ImportError: def f``).
    """
    names: set[str] = set()
    body = list(tree.body)
    while body:
        node = body.pop()
        if isinstance(node, ast.If | ast.Try | ast.With):
            for part in ("body", "orelse", "finalbody", "handlers"):
                body += getattr(node, part, [])
            continue
        if isinstance(node, ast.ExceptHandler):
            body += node.body
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names
