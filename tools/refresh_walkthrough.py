"""Run docs/walkthrough.md's commands as written and put what they print back in the page.

The page shows real output; after a change to what a command prints, run

    PYTHONPATH=. .venv/bin/python tools/refresh_walkthrough.py

and review the diff (figures change from run to run; the words are what to read).
``tests/test_walkthrough.py`` runs the same commands and checks what they print.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "walkthrough.md"


def refreshed(text: str, cwd: Path) -> str:
    """The page with each console block's output replaced by what its command prints now."""
    out: list[str] = []
    block: list[str] | None = None
    kind = ""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for line in text.splitlines():
        if line.startswith("```") and block is None:
            kind, block = line[3:], []
            out.append(line)
            continue
        if line.startswith("```") and block is not None:
            out.extend(_block(kind, block, cwd, env))
            out.append(line)
            block = None
            continue
        (block if block is not None else out).append(line)
    return "\n".join(out) + "\n"


def _block(kind: str, lines: list[str], cwd: Path, env: dict[str, str]) -> list[str]:
    if kind in ("python", "yaml"):  # a file the reader writes: its first line names it
        name = lines[0].lstrip("# ").split(":")[0]
        (cwd / name).write_text("\n".join(lines) + "\n")
        return lines
    if kind != "console":
        return lines
    words = shlex.split(lines[0].removeprefix("$ "))
    program = {"python": [sys.executable], "iotune": [sys.executable, "-m", "iotune"]}
    done = subprocess.run(
        [*program[words[0]], *words[1:]], cwd=cwd, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(f"{lines[0]}: exit {done.returncode}\n{done.stderr}")
    printed = (done.stdout + done.stderr).rstrip("\n").splitlines()
    return [lines[0], *printed]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        PAGE.write_text(refreshed(PAGE.read_text(), Path(tmp)))


if __name__ == "__main__":
    main()
