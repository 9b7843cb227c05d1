"""The batches pattern through xbatcher: its ``BatchGenerator`` arguments, and the export.

xbatcher's ``BatchGenerator`` cuts an ``xarray.DataArray`` into samples of
``input_dims`` and gathers them into batches of ``batch_dims``.  A sample of
``read.batches`` (``e`` steps of the first dimension, every other dimension
whole) is ``input_dims`` of the whole sample shape, and a batch of ``batch``
such samples is ``batch x e`` steps of the first dimension, concatenated
(``concat_input_dims=True``: each batch is ``(input_batch, <dim>_input ...)``).
Batch ``k`` is then the samples ``k x batch .. (k + 1) x batch - 1`` in order,
the tiles iotune's own loader numbers the same way.  xbatcher does not shuffle
samples; with ``shuffle`` the batches are taken in a random order, as a
``DataLoader(shuffle=True)`` over xbatcher's ``MapDataset`` takes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Export, Makers, Target
from iotune.core.errors import NotApplicable

GENERATOR = """import numpy as np
import xbatcher

batches = xbatcher.BatchGenerator(
    ds[[{variable!r}]],  # a Dataset: xbatcher 0.4 concatenates a dask DataArray's wrongly
    input_dims={input_dims!r},
    batch_dims={batch_dims!r},
    concat_input_dims=True,
)
order = {order}
for k in order:
    # {batch} samples of {label}: (input_batch, {inputs})
    batch = batches[int(k)][{variable!r}].values
"""


def generator_arguments(
    dims: tuple[str, ...], shape: tuple[int, ...], batches: Mapping[str, Any]
) -> dict[str, Any]:
    """``BatchGenerator``'s ``input_dims`` and ``batch_dims`` for the sweep's ``read.batches``.

    Raises
    ------
    NotApplicable
        The sample is not whole along every dimension but the first (xbatcher's
        batches would then hold every tile across those dimensions, not ``batch``).
    """
    named = {str(k): int(v) for k, v in dict(batches.get("sample") or {}).items()}
    extents = {d: named.get(d, n) for d, n in zip(dims, shape, strict=True)}
    first = dims[0]
    if first not in named:
        extents[first] = shape[0]
    cut = [d for d, n in zip(dims[1:], shape[1:], strict=True) if extents[d] != n]
    if cut:
        raise NotApplicable(
            f"xbatcher draws batches along {first}: the sample must be whole along {', '.join(cut)}"
        )
    return {
        "input_dims": extents,
        "batch_dims": {first: int(batches.get("batch", 32)) * extents[first]},
    }


def xbatcher_export(open_text: str, target: Target, batches: Mapping[str, Any]) -> Export:
    """The ``xbatcher`` export: the trial's ``open_dataset`` line, then the generator loop.

    ``open_text`` binds ``ds`` (the point's ``xarray`` export).
    """
    args = generator_arguments(tuple(target.dims), tuple(target.shape), batches)
    batch = int(batches.get("batch", 32))
    order = "range(len(batches))"
    if batches.get("shuffle", True):
        order = "np.random.default_rng().permutation(len(batches))  # shuffle=True"
    text = GENERATOR.format(
        variable=target.variable,
        batch=batch,
        label="x".join(str(n) for n in args["input_dims"].values()),
        inputs=", ".join(f"{d}_input" for d in args["input_dims"]),
        order=order,
        **args,
    )
    return {"text": f"{open_text}\n{text}", "value": args}


def xbatcher_makers(
    backend: Any,
    settings: Mapping[str, Any],
    target: Target,
    batches: Mapping[str, Any],
    *,
    storage: Any = None,
) -> Makers:
    """The ``xbatcher`` export of a point of ``backend``: its ``open_dataset`` line, then the loop.

    A point without ``dask_chunks`` was opened without dask (``chunks=None``).
    """

    def make() -> Export:
        opened = {**settings, "dask_chunks": settings.get("dask_chunks") or "none"}
        found = backend.exports(opened, target, storage=storage).get("xarray_open") or {}
        if "text" not in found:
            why = found.get("unavailable") or f"{backend.name} has no open_dataset export"
            raise NotApplicable(why)
        return xbatcher_export(found["text"], target, batches)

    return {"xbatcher": make}
