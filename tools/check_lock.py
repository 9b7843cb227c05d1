"""Exit 1, naming the command that fixes it, when requirements/lock.txt is stale.

    python tools/check_lock.py [ROOT]

The lock's first line records the hash of pyproject's dependency lists it was compiled
from (``tools/deps_hash.py lock``); any edit to ``dependencies`` or an extra changes that
hash. Standard library only: `make test` runs it before a venv exists.
"""

import re
import sys
from pathlib import Path

from deps_hash import LOCK, ROOT, digest

HEADER = re.compile(r"^# pyproject-deps: ([0-9a-f]{12})\b")
FIX = "run `make lock` and commit requirements/lock.txt"


def problem(root: Path = ROOT) -> str | None:
    """Why the lock at ``root`` does not match its pyproject.toml, or None when it does."""
    lock = root / LOCK
    if not lock.exists():
        return f"{LOCK} is missing; {FIX}"
    lines = lock.read_text().splitlines()
    found = HEADER.match(lines[0]) if lines else None
    if found is None:
        return f"{LOCK}: its first line must be '# pyproject-deps: <hash>' (tools/lock.py); {FIX}"
    wanted = digest("lock", root)
    if found.group(1) != wanted:
        return (
            f"{LOCK} is out of date: pyproject.toml's dependency lists changed after it was "
            f"compiled (lock {found.group(1)}, pyproject {wanted}); {FIX}"
        )
    return None


if __name__ == "__main__":
    message = problem(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT)
    if message:
        print(message, file=sys.stderr)
        sys.exit(1)
