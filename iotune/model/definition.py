"""What one sweep parameter is: how it parses from a spec, prints, and is labelled.

The parameters themselves are declared in :mod:`iotune.model.parameters`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from iotune.core.units import chunk_label, format_size

if TYPE_CHECKING:
    from iotune.model.spec import Workload

Kind = Literal["size", "count", "enum", "shape", "name", "fraction"]
Group = Literal["format", "cache", "parallel", "file system", "MPI", "object store", "workload"]
Parser = Callable[[object, str, "Workload"], Any]
KINDS: tuple[str, ...] = ("size", "count", "enum", "shape", "name", "fraction")
GROUPS: tuple[str, ...] = get_args(Group)


@dataclass(frozen=True)
class ParameterDef:
    """One sweep parameter: how it parses, prints and is labelled.

    Parameters
    ----------
    name
        The key under ``parameters:`` in a spec and the coordinate in results.
    kind
        ``size`` (bytes), ``count`` (an integer), ``enum`` (one of ``choices``),
        ``shape`` (per-dimension sizes, stored as a label like ``8x128x128``) or
        ``name`` (a free name, e.g. a hint set) or ``fraction`` (a number from 0 to 1).
    group
        Which knobs it belongs to, for listings: format, cache, parallel, file system, MPI.
    long_name
        The label of its coordinate and axes.
    parse
        ``parse(value, path, workload)``: the value from the spec, validated.
    example
        A value as a spec writes it, for documentation and the registry's tests.
    generic
        Applied by the trial runner for any backend (not by a format).
    """

    name: str
    kind: Kind
    group: Group
    long_name: str
    parse: Parser
    example: object
    generic: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r}; allowed: {', '.join(KINDS)}")
        if self.group not in GROUPS:
            raise ValueError(f"{self.name}: group {self.group!r}; allowed: {', '.join(GROUPS)}")

    @property
    def is_bytes(self) -> bool:
        """Whether values are byte counts (shown as ``64MiB``)."""
        return self.kind == "size"

    @property
    def units(self) -> str | None:
        """CF ``units`` of the coordinate: ``bytes``, ``1`` for counts, none for labels."""
        return {"size": "bytes", "count": "1", "fraction": "1"}.get(self.kind)

    def show(self, value: Any) -> str:
        """A value as a person writes it in a spec: ``64MiB``, ``8x128x128``, ``zlib``."""
        if self.is_bytes and isinstance(value, int | float) and not isinstance(value, bool):
            # exact, as a spec may say it: 64MiB, but 4000 (never a rounded 3.9KiB)
            if int(value) == 0:  # "off" for alignment, page_size and the like: not "0B"
                return "0"
            return format_size(int(value)) if int(value) % 1024 == 0 else str(int(value))
        if self.kind == "shape" and isinstance(value, tuple):
            return chunk_label(value)
        return str(value)

    def label(self, value: Any) -> Any:
        """The value as results store it (shapes as labels, the rest unchanged)."""
        return chunk_label(value) if self.kind == "shape" else value

    def attrs(self) -> dict[str, str]:
        """The coordinate attributes of this parameter in a results Dataset."""
        units = self.units
        return {"long_name": self.long_name} | ({"units": units} if units else {})
