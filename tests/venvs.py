"""New virtual environments for the tests that install iotune the way a user does."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def installer(venv: Path) -> list[str]:
    """``pip install`` into ``venv``, done by uv when the test's environment has it.

    The same requirements give the same wheels either way (binder/requirements.txt pins
    every package the notebooks import); uv fetches them in parallel, which takes a
    fresh machine's build from about 45 s to about 10 s.
    """
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is not None:
        return [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python")]
    python = str(venv / "bin" / "python")
    return [python, "-m", "pip", "--disable-pip-version-check", "-q", "install", "--no-compile"]
