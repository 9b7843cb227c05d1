"""The target a conversion writes, described for its format's writer and opened.

A :class:`~iotune.backends.target.TargetPlan` holds what the writer needs of the
source and the configuration, in no format's words: the dimensions, every variable
(the converted ones with the layout's chunks and shards, the others with their own
storage) and the format's settings.  The writer is the one the layout's backend
declares (``Backend.apply_target()``); convert/ names no format.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iotune.backends.target import TargetPlan, TargetVariable, TargetWriter
from iotune.convert.layout import Layout
from iotune.convert.source import Source, own_encoding, source_chunks


def plan_of(source: Source, layout: Layout, converted: Sequence[str]) -> TargetPlan:
    """The target of ``layout`` for ``source``, ``converted`` written with its storage."""
    ds = source.ds
    variables = []
    for name, var in ds.variables.items():
        dims = tuple(map(str, var.dims))
        common: dict[str, Any] = {
            "name": str(name),
            "dims": dims,
            "shape": tuple(int(n) for n in var.shape),
            "dtype": var.dtype,
            "attrs": dict(var.attrs),
        }
        if name in converted:
            made = TargetVariable(
                **common,
                converted=True,
                chunks=layout.chunks_for(dims, var.shape),
                shards=layout.shards_for(dims, var.shape),
            )
        else:
            encoding = own_encoding(var) if var.ndim else {}
            made = TargetVariable(
                **common, converted=False, chunks=source_chunks(var), encoding=encoding
            )
        variables.append(made)
    return TargetPlan(
        sizes={str(d): int(n) for d, n in ds.sizes.items()},
        unlimited=tuple(map(str, source.unlimited)),
        variables=tuple(variables),
        attrs=dict(ds.attrs),
        codec=layout.codec,
        quantize=layout.lossy,
        settings=dict(layout.settings),
    )


def open_target(
    path: Path, source: Source, layout: Layout, converted: Sequence[str], *, fresh: bool
) -> TargetWriter:
    """The format's writer at ``path``: created afresh, or reopened to finish it."""
    plan = plan_of(source, layout, converted)
    writer = layout.writer
    if fresh:
        return writer.create(path, plan, source.ds)
    return writer.reopen(path, plan, source.ds)
