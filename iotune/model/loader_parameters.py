"""The ``batches`` pattern's loader knobs, as torch's DataLoader names them.

Declared apart from the storage knobs of :mod:`iotune.model.parameters`, which
splices them into the one registry.  Old names: :mod:`iotune.model.renamed`;
refused in sweeps without the pattern (:mod:`iotune.specfile.batches`).
"""

from __future__ import annotations

from iotune.model import parsers
from iotune.model.definition import ParameterDef

LOADER_PARAMETERS: tuple[ParameterDef, ...] = (
    ParameterDef(
        "num_workers",
        "count",
        "parallel",
        "loader worker processes (batches pattern; 0: in the trial's process)",
        parsers.count(0, 64),
        2,
        generic=True,
    ),
    ParameterDef(
        "prefetch_factor",
        "count",
        "parallel",
        "batches in flight per loader worker (batches pattern)",
        parsers.count(1, 64),
        2,
        generic=True,
    ),
    ParameterDef(
        "pin_memory",
        "enum",
        "parallel",
        "batches copied to page-locked memory (batches pattern; torch loader)",
        parsers.parse_switch,
        "off",
        generic=True,
    ),
)
