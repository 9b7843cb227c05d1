"""Changes to a spec's YAML applied before validation (``load_spec(path, overrides=...)``).

A bad value given as an override is reported with its field, like one in the
file, because validation runs after the change.  The CLI's ``--executor``,
``--workers``, ``--scheduler`` and ``--per-host`` are overrides too, so they
pass the same checks as the ``execution`` section.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iotune.core.errors import SpecError
from iotune.model.spec import Sweep
from iotune.specfile.parse import load_spec, load_spec_text


def load_with_overrides(path: str | Path, overrides: Mapping[str, Any]) -> Sweep:
    """Read ``path``, apply dotted-key ``overrides`` to its YAML, then validate.

    Raises
    ------
    SpecError
        The file is missing, malformed or invalid, or an override key does not
        lead through mappings; the message names the field.
    """
    if not overrides:
        return load_spec(path)
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return load_spec(path)  # raises the SpecError that names the problem
    if data is None:
        data = {}
    for key, value in overrides.items():
        apply_override(data, key, value, source=str(path))
    shown = ", ".join(f"{k}={v!r}" for k, v in overrides.items())
    text = f"# {path} with overrides: {shown}\n" + yaml.safe_dump(
        data, sort_keys=False, default_flow_style=None
    )
    return load_spec_text(text, source=str(path))


def apply_override(data: Any, key: object, value: Any, *, source: str) -> None:
    """Set ``data[a][b][c] = value`` for ``key = "a.b.c"`` (``None`` removes it)."""
    parts = key.split(".") if isinstance(key, str) else []
    if not parts or not all(parts):
        raise SpecError(
            "overrides", f"{key!r} is not a dotted key like 'parameters.codec'", source=source
        )
    node = data
    for depth, part in enumerate(parts):
        if not isinstance(node, dict):
            where = ".".join(parts[:depth])
            raise SpecError(
                where,
                f"override {key!r}: {where} is {node!r}, not a mapping, so it has no keys",
                source=source,
            )
        if depth == len(parts) - 1:
            break
        if node.get(part) is None:
            if value is None:
                return  # removing below an absent section: nothing to do
            node[part] = {}
        node = node[part]
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = _plain(value)


def _plain(value: Any) -> Any:
    """A copy YAML can dump: tuples become lists, mappings plain dicts."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def execution_overrides(
    *,
    executor: str | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    per_host: int | None = None,
) -> dict[str, Any]:
    """Dotted overrides for the ``execution`` section from command-line options.

    Naming workers, a scheduler or a per-host limit without an executor means
    dask, the only executor that takes them.
    """
    given = {"workers": workers, "scheduler": scheduler, "per_host": per_host}
    changes = {f"execution.{k}": v for k, v in given.items() if v is not None}
    if executor is not None:
        changes["execution.executor"] = executor
    elif changes:
        changes["execution.executor"] = "dask"
    return changes
