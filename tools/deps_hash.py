"""Print a short hash of pyproject's dependency lists: the venv stamps and the lock's header.

    python tools/deps_hash.py core   # stamp of a venv with the core only (`make demo`)
    python tools/deps_hash.py all    # stamp of a venv with every extra and dev (`make test`)
    python tools/deps_hash.py lock   # what requirements/lock.txt was compiled from

A venv's stamp also covers the lock file and the Python version, so a regenerated lock or
a new interpreter reinstalls; the lock's hash covers pyproject's lists alone, since the lock
is compiled for every platform and Python the project supports.
"""

import hashlib
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = Path("requirements") / "lock.txt"
MODES = ("core", "all", "lock")


def digest(mode: str, root: Path = ROOT) -> str:
    """The hash for ``mode`` (one of :data:`MODES`) of the checkout at ``root``, 12 hex digits."""
    if mode not in MODES:
        raise SystemExit(f"deps_hash.py: mode {mode!r} is not one of {', '.join(MODES)}")
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    lists = [project.get("dependencies"), project.get("optional-dependencies")]
    if mode == "core":
        lists = lists[:1]
    parts: list[object] = [mode, lists]
    if mode != "lock":
        lock = (root / LOCK).read_text() if (root / LOCK).exists() else ""
        parts += [hashlib.sha256(lock.encode()).hexdigest(), sys.version_info[:2]]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:12]


if __name__ == "__main__":
    print(digest(sys.argv[1] if len(sys.argv) > 1 else "all"))
