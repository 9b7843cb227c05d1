"""Compile requirements/lock.txt from pyproject.toml with uv (`make lock` runs this).

    python tools/lock.py --uv PATH [--upgrade]

Every extra and dev, for every platform (``--universal``) from the oldest Python that
pyproject allows. Versions already in the lock are kept where they still satisfy
pyproject (uv prefers an output file's pins), so regenerating after adding one
dependency moves nothing else; ``--upgrade`` takes the newest of everything. The first
line records the hash of the dependency lists it was compiled from, which
tools/check_lock.py and tests/test_lock.py compare with pyproject's.
"""

import argparse
import re
import subprocess
import sys
import tomllib

from deps_hash import LOCK, ROOT, digest


def compile_lock(uv: str, *, upgrade: bool) -> None:
    """Write ``ROOT / LOCK`` with ``uv pip compile`` and its hash header."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    oldest = re.search(r">=\s*(\d+\.\d+)", project["requires-python"]).group(1)
    lock = ROOT / LOCK
    lock.parent.mkdir(exist_ok=True)
    command = [uv, "pip", "compile", "pyproject.toml", "--quiet", "--universal"]
    command += ["--python-version", oldest, "--extra", "all", "--extra", "dev"]
    command += ["--custom-compile-command", "make lock", "--output-file", str(LOCK)]
    if upgrade:
        command.append("--upgrade")
    subprocess.run(command, cwd=ROOT, check=True)
    header = f"# pyproject-deps: {digest('lock')} (tools/deps_hash.py lock)\n"
    lines = lock.read_text().splitlines(keepends=True)
    body = "".join(line for line in lines if not line.startswith("# pyproject-deps:"))
    lock.write_text(header + body)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uv", required=True, help="the uv executable")
    parser.add_argument("--upgrade", action="store_true", help="take the newest versions")
    args = parser.parse_args()
    compile_lock(args.uv, upgrade=args.upgrade)
    sys.exit(0)
