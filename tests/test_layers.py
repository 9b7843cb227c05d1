"""The package's layers (docs/architecture.md): imports point down, never up, never in a cycle.

Read from the source with ``ast``, so an import inside a function or under
``TYPE_CHECKING`` counts like one at the top: a lazy import hides a
dependency from the interpreter, not from a reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "iotune"

#: bottom to top; a module belongs to the layer of its longest matching prefix
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("iotune.core",)),
    ("vocabulary", ("iotune.model",)),
    ("primitives", ("iotune.measuring", "iotune.mpi", "iotune.objectstore")),
    ("backends", ("iotune.backends",)),
    ("spec", ("iotune.specfile",)),
    ("logs", ("iotune.darshan_",)),
    ("runner", ("iotune.runner",)),
    ("executors", ("iotune.executors",)),
    ("results", ("iotune.results",)),
    ("search", ("iotune.search",)),
    ("analysis", ("iotune.analysis",)),
    ("convert", ("iotune.convert",)),
    ("views", ("iotune.plot", "iotune.views")),
    ("application", ("iotune.app",)),
    ("command line", ("iotune.cli",)),
    ("entry", ("iotune.__main__", "iotune")),
]
#: the only modules at the top of ``iotune/``: the package and ``python -m iotune``
ENTRY_POINTS = {"iotune", "iotune.__main__"}
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def packages() -> set[str]:
    return {m for m, p in modules().items() if p.name == "__init__.py"}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The iotune modules ``path`` imports, resolved to modules (not names in them)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("iotune")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("iotune"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in known else node.module)
    return found


def layer_of(module: str) -> int:
    best, rank = -1, -1
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), index
    if rank < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/architecture.md")
    return rank


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(path, set(mods)) - {name} for name, path in mods.items()}


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    wrong = []
    for module, targets in edges.items():
        if module == "iotune":  # the package's lazy table names the public entry points
            continue
        for target in sorted(targets):
            if target != "iotune" and layer_of(target) > layer_of(module):
                low, high = LAYERS[layer_of(module)][0], LAYERS[layer_of(target)][0]
                wrong.append(f"{module} ({low}) imports {target} ({high})")
    return wrong


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


#: folders whose subpackages are parts of one layer: ``backends/`` holds one package per
#: format beside the modules they share, and a format's exports name the other formats'
FLAT_FOLDERS = ("iotune.backends",)


def folder_of(module: str, packages: set[str]) -> str:
    """The folder (subpackage) a module lives in, or the module itself at the top level."""
    for flat in FLAT_FOLDERS:
        if module.startswith(flat + "."):
            return flat
    parts = module.split(".")
    if module in packages:
        return module
    return ".".join(parts[:-1]) if len(parts) > 2 else module


def folder_graph(edges: dict[str, set[str]], packages: set[str]) -> dict[str, set[str]]:
    """Imports between folders: ``iotune.runner`` imports ``iotune.backends`` if any module does."""
    folders: dict[str, set[str]] = {}
    for module, targets in edges.items():
        if module == "iotune":
            continue
        source = folder_of(module, packages)
        folders.setdefault(source, set())
        for target in targets - {"iotune"}:
            if folder_of(target, packages) != source:
                folders[source].add(folder_of(target, packages))
    return folders


def folder_layers() -> dict[str, int]:
    """Each folder's layer; a folder whose modules span several layers is a finding."""
    folders = packages()
    found: dict[str, set[int]] = {}
    for module in modules():
        if module != "iotune":
            found.setdefault(folder_of(module, folders), set()).add(layer_of(module))
    return {folder: min(ranks) for folder, ranks in found.items() if len(ranks) == 1} | {
        folder: -1 for folder, ranks in found.items() if len(ranks) > 1
    }


def test_every_module_has_a_layer() -> None:
    for module in modules():
        layer_of(module)


def test_imports_point_down() -> None:
    assert upward_imports(graph()) == []


def test_no_import_cycle() -> None:
    edges = {m: {t for t in ts if t != "iotune"} for m, ts in graph().items() if m != "iotune"}
    assert cycles(edges) == []


def test_each_folder_is_one_layer() -> None:
    """A folder holds one layer, so the picture a reader sees is the layering."""
    assert {f: r for f, r in folder_layers().items() if r < 0} == {}


def test_folders_import_down_and_never_in_a_loop() -> None:
    folders = folder_graph(graph(), packages())
    rank = folder_layers()
    upward = [
        f"{a} imports {b}" for a, bs in folders.items() for b in sorted(bs) if rank[b] > rank[a]
    ]
    assert upward == []
    assert cycles(folders) == []


def test_a_folder_loop_is_caught() -> None:
    folders = {"iotune.specfile", "iotune.runner"}
    edges = {
        "iotune.specfile.parse": {"iotune.runner.data"},
        "iotune.runner.plan": {"iotune.specfile.x"},
    }
    assert cycles(folder_graph(edges, folders)) == [["iotune.runner", "iotune.specfile"]]


def test_package_inits_import_nothing_eagerly() -> None:
    """A subpackage's ``__init__`` that imported its modules would import upward layers."""
    for module, path in modules().items():
        if path.name != "__init__.py" or module == "iotune":
            continue
        tree = ast.parse(path.read_text())
        eager = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        eager = [n for n in eager if getattr(n, "module", None) != "__future__"]
        allowed = module in ("iotune.backends", "iotune.executors", "iotune.plot")
        targets = {a.name for n in eager for a in n.names}
        assert allowed or not eager, f"{module} imports {targets} at import time"


def test_modules_stay_small() -> None:
    sizes = {m: len(p.read_text().splitlines()) for m, p in modules().items()}
    assert {m: n for m, n in sizes.items() if n > MAX_LINES} == {}


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_cycle_finder(edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(edges) == expected


def test_an_upward_import_is_caught() -> None:
    assert upward_imports({"iotune.backends.posix.backend": {"iotune.runner.trial"}}) == [
        "iotune.backends.posix.backend (backends) imports iotune.runner.trial (runner)"
    ]


def test_only_entry_points_at_the_top() -> None:
    """Every other module lives in the folder of its layer, so the tree shows the layers."""
    top = {m for m in modules() if m.count(".") <= 1 and m not in packages()} | {"iotune"}
    assert top == ENTRY_POINTS


def private_imports(path: Path, module: str, known: set[str], folders: set[str]) -> list[str]:
    """``from iotune.x.y import _name`` where ``iotune.x`` is not ``module``'s folder."""
    found = []
    own = folder_of(module, folders)
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("iotune")):
            continue
        source = node.module or ""
        for alias in node.names:
            private = alias.name.startswith("_") and not alias.name.startswith("__")
            if private and folder_of(source, folders) != own:
                found.append(f"{module} imports {source}.{alias.name}")
    return found


def test_no_private_name_is_imported_across_folders() -> None:
    mods, folders = modules(), packages()
    found = [f for m, p in mods.items() for f in private_imports(p, m, set(mods), folders)]
    assert found == []


def test_a_private_import_across_folders_is_caught(tmp_path: Path) -> None:
    source = tmp_path / "session.py"
    source.write_text("from iotune.specfile.overrides import _apply\n")
    folders = {"iotune.app", "iotune.specfile"}
    assert private_imports(source, "iotune.app.session", set(), folders) == [
        "iotune.app.session imports iotune.specfile.overrides._apply"
    ]


#: strings above backends/ that are spelled like a format but name something else: each
#: format is asked (``get_backend(name)``, ``backends.DEFAULT_BACKEND``, ...), never named
NAMED_BACKENDS_ALLOWED = {
    ("iotune/specfile/execution.py", "memory"),  # dask-jobqueue's memory option
    ("iotune/runner/provenance.py", "h5py"),  # Python packages whose versions are recorded
    ("iotune/runner/provenance.py", "zarr"),
    ("iotune/runner/steps.py", "memory"),  # a cache state: the data never left memory
    ("iotune/results/dataset.py", "netcdf4"),  # xarray's engine for the results file
}


def named_backends() -> set[tuple[str, str]]:
    """``(module path, name)`` of every string constant above backends/ that is a built-in name."""
    from iotune.backends import BUILTINS

    below = {"core", "vocabulary", "primitives", "backends"}
    found = set()
    for name, path in modules().items():
        if name in ENTRY_POINTS or LAYERS[layer_of(name)][0] in below:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in BUILTINS:
                found.add((str(path.relative_to(PACKAGE.parent)), str(node.value)))
    return found


def test_no_layer_above_backends_names_a_format() -> None:
    found = named_backends()
    new = sorted(found - NAMED_BACKENDS_ALLOWED)
    assert not new, f"ask the backend (get_backend(name)...) instead of naming it: {new}"
    clean = [p for p, _ in found if p.startswith("iotune/convert/") or p == "iotune/app/apply.py"]
    assert not clean, clean
    assert not NAMED_BACKENDS_ALLOWED - found, "remove the entries that no longer name a format"


def test_no_module_outside_backends_imports_a_private_backend_module() -> None:
    wrong = sorted(
        (name, target)
        for name, targets in graph().items()
        if not name.startswith("iotune.backends")
        for target in targets
        if target.startswith("iotune.backends")
        and any(part.startswith("_") and part != "__init__" for part in target.split("."))
    )
    assert not wrong, wrong


@pytest.mark.parametrize("fmt", ["netcdf4", "h5py", "zarr", "posix", "memory", "mpiio"])
def test_each_format_package_holds_its_modules(fmt: str) -> None:
    held = {p.name for p in (PACKAGE / "backends" / fmt).glob("*.py")}
    needed = {"knobs.py", "backend.py"} | (
        {"exports.py"} if fmt not in ("memory", "mpiio") else set()
    )
    needed |= {"target.py"} if fmt in ("netcdf4", "h5py", "zarr") else set()
    assert needed <= held, sorted(needed - held)
