"""Print a short hash of pyproject's dependency lists (the venv stamp in the Makefile)."""

import hashlib
import json
import sys
import tomllib
from pathlib import Path

project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
blob = json.dumps(
    [project.get("dependencies"), project.get("optional-dependencies"), sys.version_info[:2]]
)
print(hashlib.sha256(blob.encode()).hexdigest()[:12])
