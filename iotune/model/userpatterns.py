"""A read pattern that is the user's own code: ``{name, call}`` or ``{name, script, function}``.

Only the description lives here (what the spec says, where it was found);
checking that the code exists is :mod:`iotune.specfile.userpatterns`, running
it is :mod:`iotune.measuring.usercode`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class UserPattern:
    """One ``read.patterns`` entry that calls the user's function with the trial's Dataset.

    Exactly one of ``call`` (``"module:function"``, a module importable from
    the spec's directory or the environment) and ``script`` (a Python file,
    relative to the spec's directory, with ``function`` in it) is given.
    ``base`` is the spec's directory, absolute; it is where the code was
    found, not what it is, so it is left out of comparisons and the digest.
    """

    name: str
    call: str | None = None
    script: str | None = None
    function: str | None = None
    base: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"name {self.name!r} is not an identifier")
        if (self.call is None) == (self.script is None):
            raise ValueError(f"pattern {self.name!r}: give exactly one of call and script")
        if self.call is not None:
            module, _, attr = self.call.partition(":")
            if not attr or not all(p.isidentifier() for p in (*module.split("."), attr)):
                raise ValueError(f"call {self.call!r} is not 'module:function'")
            if self.function is not None:
                raise ValueError(f"pattern {self.name!r}: function goes with script, not call")
        elif self.function is None or not self.function.isidentifier():
            raise ValueError(f"pattern {self.name!r}: script needs a function name")

    @property
    def module(self) -> str | None:
        """The module ``call`` names (None for a script)."""
        return self.call.partition(":")[0] if self.call else None

    @property
    def attribute(self) -> str:
        """The function's name in its module or script."""
        return self.call.partition(":")[2] if self.call else str(self.function)

    @property
    def script_path(self) -> Path | None:
        """The script, resolved against the spec's directory (None for ``call``)."""
        if self.script is None:
            return None
        path = Path(self.script).expanduser()
        return path if path.is_absolute() or not self.base else Path(self.base) / path

    def describe(self) -> str:
        """``myanalysis:monthly_mean`` or ``analysis.py:run``, as messages name it."""
        return self.call if self.call else f"{self.script}:{self.function}"

    def to_dict(self) -> dict[str, Any]:
        """The spec entry, as written (no ``base``: the spec's place is not what is measured)."""
        if self.call is not None:
            return {"name": self.name, "call": self.call}
        return {"name": self.name, "script": self.script, "function": self.function}

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, base: str = "") -> UserPattern:
        """The entry of :meth:`to_dict`, found from ``base`` (the spec's directory)."""
        keys = ("name", "call", "script", "function")
        return cls(**{k: data[k] for k in keys if k in data}, base=base)
