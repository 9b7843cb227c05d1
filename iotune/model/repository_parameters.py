"""The knobs of an Icechunk repository's configuration (the icechunk backend's own).

Declared apart from the storage knobs of :mod:`iotune.model.parameters`, which
splices them into the one registry; the repository keeps them in its configuration.
"""

from __future__ import annotations

from iotune.model import parsers
from iotune.model.definition import ParameterDef

REPOSITORY_PARAMETERS: tuple[ParameterDef, ...] = (
    ParameterDef(
        "inline_chunk_threshold",
        "size",
        "format",
        "Icechunk stores chunks below this in its manifests",
        parsers.size,
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
