"""The batches pattern's exports: a map-style ``Dataset`` class and its ``DataLoader`` line.

Format-independent except for how a worker opens the array, which the backend
says (:meth:`~iotune.backends.base.Backend.loader_open`: lines that bind
``self._array`` from ``self.path``).  Sample ``i`` is the ``i``-th tile of the
array in C order, as the measurement read it (:mod:`iotune.measuring.samples`),
so the exported class reads what was measured.  torch is needed only to run the
``DataLoader`` line; the class itself uses NumPy and the format's library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Export, Makers, Target
from iotune.measuring.samples import Samples

DATASET = '''import numpy as np
{imports}


class Dataset:
    """Samples of {variable!r}, {label} values each: sample i is the i-th such tile."""

    grid = {grid!r}  # samples along {dims!r}
    extents = {extents!r}

    def __init__(self, path):
        self.path = path
        self._array = None  # opened lazily: once in each worker process

    def __getstate__(self):  # what a DataLoader sends its workers: never an open file
        return {{**self.__dict__, "_array": None, "_file": None}}

    def __len__(self):
        return {count}

    def __getitem__(self, i):
        if not 0 <= i < {count}:
            raise IndexError(i)
        if self._array is None:
{open_lines}
        origin = np.unravel_index(i, self.grid)
        box = tuple(slice(o * e, o * e + e) for o, e in zip(origin, self.extents))
        return np.asarray(self._array[box])
'''


def samples_of(target: Target, batches: Mapping[str, Any]) -> Samples:
    """The samples the sweep's ``read.batches`` drew from ``target``."""
    named = {str(k): int(v) for k, v in dict(batches.get("sample") or {}).items()}
    if not named:
        named = {target.dims[0]: 1}
    extents = tuple(named.get(d, n) for d, n in zip(target.dims, target.shape, strict=True))
    return Samples(tuple(target.shape), extents)


def dataset_code(
    open_lines: tuple[str, list[str]], target: Target, batches: Mapping[str, Any]
) -> str:
    """The ``Dataset`` class: ``open_lines`` is the import and the lines that open the array."""
    imports, lines = open_lines
    samples = samples_of(target, batches)
    return DATASET.format(
        imports=imports,
        variable=target.variable,
        label="x".join(map(str, samples.extents)),
        grid=samples.grid,
        dims=tuple(target.dims),
        extents=samples.extents,
        count=len(samples),
        open_lines="\n".join(f"            {line}" for line in lines),
    )


def dataloader_arguments(settings: Mapping[str, Any], batches: Mapping[str, Any]) -> dict:
    """``DataLoader``'s keyword arguments for the point's ``num_workers``, ``prefetch_factor``
    and ``pin_memory``.

    torch refuses ``prefetch_factor`` and ``persistent_workers`` without worker
    processes, so ``num_workers: 0`` gives neither.
    """
    workers = int(settings.get("num_workers") or 0)
    args: dict[str, Any] = {
        "batch_size": int(batches.get("batch", 32)),
        "shuffle": bool(batches.get("shuffle", True)),
        "num_workers": workers,
    }
    if workers:
        args["prefetch_factor"] = int(settings.get("prefetch_factor") or 2)
        args["persistent_workers"] = True
    if settings.get("pin_memory") in ("on", True):
        args["pin_memory"] = True
    return args


def dataloader_code(settings: Mapping[str, Any], batches: Mapping[str, Any]) -> str:
    args = dataloader_arguments(settings, batches)
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"from torch.utils.data import DataLoader\nloader = DataLoader(Dataset(path), {shown})"


def loader_makers(
    backend: Any, settings: Mapping[str, Any], target: Target, batches: Mapping[str, Any]
) -> Makers:
    """The ``torch_dataset`` and ``torch_dataloader`` exports of a point of ``backend``."""

    def dataset() -> Export:
        return {"text": dataset_code(backend.loader_open(target), target, batches)}

    def loader() -> Export:
        args = dataloader_arguments(settings, batches)
        return {"text": dataloader_code(settings, batches), "value": args}

    return {"torch_dataset": dataset, "torch_dataloader": loader}
