"""The knobs of an Icechunk repository's configuration (the icechunk backend's own).

Declared apart from the storage knobs of :mod:`iotune.model.parameters`, which
splices them into the one registry; the repository keeps them in its configuration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iotune.model import parsers
from iotune.model.checks import byte_size, fail
from iotune.model.definition import ParameterDef

if TYPE_CHECKING:
    from iotune.model.spec import Workload

#: Icechunk keeps the inline threshold as a 16-bit count of bytes
MAX_INLINE = 2**16 - 1


def inline_threshold(value: object, path: str, workload: Workload) -> int:
    """Bytes below which Icechunk inlines a chunk: 0 to 65535."""
    size = byte_size(value, path)
    if size > MAX_INLINE:
        raise fail(path, f"{value!r} is out of range; allowed: 0 to {MAX_INLINE} bytes")
    return size


REPOSITORY_PARAMETERS: tuple[ParameterDef, ...] = (
    ParameterDef(
        "inline_chunk_threshold",
        "size",
        "format",
        "Icechunk stores chunks below this in its manifests",
        inline_threshold,
        "4KiB",
    ),
    ParameterDef(
        "manifest_split",
        "count",
        "format",
        "chunks per Icechunk manifest along the first dimension",
        parsers.count(1, 2**31),
        64,
    ),
    ParameterDef(
        "manifest_preload",
        "enum",
        "cache",
        "Icechunk loads every manifest when a session opens",
        parsers.parse_switch,
        "on",
    ),
    ParameterDef(
        "max_concurrent_requests",
        "count",
        "parallel",
        "Icechunk's requests to storage at once",
        parsers.count(1, 65536),
        128,
    ),
)
