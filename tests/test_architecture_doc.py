"""docs/architecture.md maps the code: every module it names exists, every folder is in it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "iotune"
DOC = ROOT / "docs" / "architecture.md"
#: top-level folders of the repository a path in the doc may start with instead of iotune/
OUTSIDE = ("tests/", "docs/", "benchmarks/", "sweeps/", "notebooks/", "binder/", "tools/", ".ci/")
#: a code span that reads as a path in the package: ``runner/plan.py``, ``specfile/parse``,
#: ``backends/``, ``errors.py``
PATH_SPAN = re.compile(r"`([A-Za-z0-9_]+(?:/[A-Za-z0-9_*]+)*(?:\.py|/)?)`")


def named_paths(text: str) -> set[str]:
    """The code spans of ``text`` that name a file or folder (have a ``/`` or end in ``.py``)."""
    spans = {m.group(1) for m in PATH_SPAN.finditer(text)}
    named = {s for s in spans if "/" in s or s.endswith(".py")}
    return {s for s in named if not s.startswith(OUTSIDE) and not s.startswith("test_")}


def exists(span: str) -> bool:
    """Whether ``span`` names a module or folder of the package (``NAME`` stands for any name)."""
    relative = span.removeprefix("iotune/").rstrip("/").replace("NAME", "*")
    if not relative:
        return True
    if relative.endswith(".py") and "/" not in relative:
        return any(PACKAGE.rglob(relative))
    candidates = [relative] if relative.endswith(".py") else [relative, f"{relative}.py"]
    return any(any(PACKAGE.glob(c)) for c in candidates)


def test_every_module_the_doc_names_exists() -> None:
    missing = sorted(s for s in named_paths(DOC.read_text()) if not exists(s))
    assert missing == []


def test_every_folder_of_the_package_is_described() -> None:
    text = DOC.read_text()
    folders = sorted(p.parent.relative_to(PACKAGE) for p in PACKAGE.rglob("__init__.py"))
    undescribed = [str(f) for f in folders if str(f) != "." and f"`{f}/`" not in text]
    assert undescribed == []


def test_a_stale_name_is_caught(tmp_path: Path) -> None:
    assert named_paths("`runner/plan.py` and `spec/parse` and `tests/x.py` and `lfs`") == {
        "runner/plan.py",
        "spec/parse",
    }
    assert exists("runner/plan.py") and exists("backends/") and exists("errors.py")
    assert not exists("spec/parse") and not exists("widgets/")
