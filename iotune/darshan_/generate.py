"""A sweep spec that reproduces the application's pattern and sweeps around it.

The busiest file or group of the log chooses the backend: ``h5py`` where
H5D records describe its datasets, ``mpiio`` for MPI-IO or for POSIX I/O from
several ranks (independent ``MPI_File_write_at`` is ROMIO's ``pwrite``),
``posix`` for one process.  The application's own settings (request size,
layout, collective or independent, nprocs, chunking, striping) are the
``baseline``, one point of the grid, so ``recommend`` measures them; the
parameters the diagnosis names are swept around them.  The volume is the
application's, cut to ``budget`` (never below one request per rank).

The findings' ranking goes into the spec as ``search.focus``: the
parameters the problems name, the largest problem's first, among those the
spec sweeps, which ``iotune tune`` explores first.
"""

from __future__ import annotations

import math
from typing import Any

from iotune.backends import DARSHAN_MODULES
from iotune.core.errors import DarshanError
from iotune.core.units import format_size
from iotune.darshan_.diagnosis import Finding
from iotune.darshan_.log import Log
from iotune.darshan_.summary import Dataset, Group

MiB = 2**20
#: larger request sizes tried beside the application's
LARGER = (MiB, 4 * MiB, 16 * MiB)
DTYPES = {2: "int16", 4: "float32", 8: "float64"}
HINT_SETS = {
    "default": {},
    "cb_16MiB": {"cb_buffer_size": "16MiB"},
    "ds_off": {"romio_ds_write": "disable", "romio_ds_read": "disable"},
}


def size_value(nbytes: int) -> str | int:
    """``256KiB`` when exact in KiB, else the byte count (``192``)."""
    return format_size(nbytes) if nbytes % 1024 == 0 else int(nbytes)


def generate(
    log: Log, groups: list[Group], findings: list[Finding], *, budget: int, parallel_h5py: bool
) -> tuple[dict[str, Any], list[str]]:
    """The spec (a YAML-ready mapping) and notes on what it could not reproduce.

    Raises
    ------
    DarshanError
        The log has no file with request sizes to reproduce.
    """
    main = next((g for g in groups if g.layer != "STDIO" and g.request), None)
    if main is None:
        have = ", ".join(log.modules) or "none"
        raise DarshanError(
            f"{log.path}: no spec: no file with POSIX or MPI-IO requests in the log "
            f"(modules: {have})"
        )
    named = {p for f in findings if f.group == main.name for p in f.parameters}
    notes: list[str] = []
    if main.datasets:
        spec = _h5py(log, main, named, budget, parallel_h5py, notes)
    elif main.layer == "MPI-IO" or log.nprocs > 1:
        spec = _mpiio(log, main, named, budget, notes)
    else:
        spec = _posix(main, named, budget, notes)
    head = {
        "version": 1,
        "name": f"from-{log.executable}",
        "description": f"Made by iotune darshan from {log.path} (file {main.name})",
    }
    tail: dict[str, Any] = {
        "read": {"patterns": ["full"]},
        "measure": {"repeats": 3, "cache": "cold"},
    }
    focus = _focus(findings, main, spec["parameters"])
    if focus:
        tail["search"] = {"focus": focus}
    return {**head, **spec, **tail}, notes


def _focus(findings: list[Finding], main: Group, params: dict[str, Any]) -> list[str]:
    """The swept parameters the main file's problems name, in the problems' rank order."""
    named = [
        p for f in findings if f.kind == "problem" and f.group == main.name for p in f.parameters
    ]
    return [p for p in dict.fromkeys(named) if _is_swept(p, params.get(p))]


def _is_swept(name: str, value: Any) -> bool:
    """Several values; one chunk shape (``[8, 128, 128]``) is a list too, but one value."""
    if not isinstance(value, list) or len(value) < 2:
        return False
    return name != "chunks" or not all(isinstance(v, int) for v in value)


def _per_rank(main: Group, n: int, request: int, budget: int, notes: list[str]) -> int:
    """Requests per rank: the application's volume, cut to the budget, at least one."""
    moved = main.bytes_written or main.bytes_read
    own = max(1, moved // (n * request))
    fits = budget // (n * request)
    if fits < 1:
        notes.append(
            f"the budget {format_size(budget, exact=False)} is below one request per rank "
            f"({n} x {format_size(request, exact=False)}): each rank moves one request"
        )
    elif fits < own:
        notes.append(
            f"volume cut from {format_size(moved, exact=False)} to "
            f"{format_size(n * request * fits, exact=False)} (--trial-size)"
        )
    return max(1, min(own, fits))


def _transfers(request: int, block: int, named: set[str]) -> list[int]:
    if "transfer_size" not in named:
        return [request]
    bigger = [t for t in LARGER if request < t <= block]
    return [request, *bigger[-2:]]


def _swept(values: list[Any]) -> Any:
    """One value stays fixed, several are a swept list (duplicates dropped)."""
    unique = list(dict.fromkeys(values))
    return unique[0] if len(unique) == 1 else unique


def _mpiio(log: Log, main: Group, named: set[str], budget: int, notes: list[str]) -> dict:
    n, t = log.nprocs, int(main.request or MiB)
    k = _per_rank(main, n, t, budget, notes)
    io = main.io or "independent"
    params: dict[str, Any] = {
        "nprocs": n,
        "layout": main.layout,
        "access": "contiguous",
        "transfer_size": _swept([size_value(v) for v in _transfers(t, k * t, named)]),
        "io": _swept([io, "collective", "independent"] if "io" in named else [io]),
    }
    if main.layout == "fpp":
        params["io"] = "independent"  # files per process have no collective I/O
    if t % 2:
        notes.append(f"odd request size {t} B: the workload holds twice the bytes")
    hints = _hint_names(named)
    if len(hints) > 1:
        params["hints"] = hints
    baseline = {"nprocs": n, "layout": main.layout, "transfer_size": size_value(t)}
    baseline["io"] = params["io"] if isinstance(params["io"], str) else io
    baseline |= {"hints": "default"} if "hints" in params else {}
    params, baseline = _striping(main, named, params, baseline, notes)
    workload = {"shape": {"step": n * k, "x": max(1, t // 2)}, "dtype": "int16"}
    spec = {"workload": workload, "backend": DARSHAN_MODULES["MPIIO"]}
    if "hints" in params:
        spec["hints"] = {h: HINT_SETS[h] for h in hints}
    return {**spec, "parameters": params, "baseline": baseline}


def _hint_names(named: set[str]) -> list[str]:
    if "hints" not in named:
        return ["default"]
    return ["default", "cb_16MiB", "ds_off"]


def _striping(
    main: Group, named: set[str], params: dict, baseline: dict, notes: list[str]
) -> tuple[dict, dict]:
    if main.stripe_count is None:
        return params, baseline
    count, size = main.stripe_count, main.stripe_size or 0
    counts = [count, 4, -1] if "stripe_count" in named else [count]
    params["stripe_count"] = _swept(counts)
    baseline["stripe_count"] = count
    if size and size % 65536 == 0:
        sizes = [size, 4 * MiB] if "stripe_size" in named else [size]
        params["stripe_size"] = _swept([size_value(s) for s in sizes])
        baseline["stripe_size"] = size_value(size)
    notes.append(
        f"Lustre striping {count} x {format_size(size, exact=False)} from the log: applied "
        "only where scratch is on Lustre"
    )
    return params, baseline


def _posix(main: Group, named: set[str], budget: int, notes: list[str]) -> dict:
    t = int(main.request or MiB)
    k = _per_rank(main, 1, t, budget, notes)
    sizes = [size_value(v) for v in _transfers(t, k * t, named)]
    return {
        "workload": {"shape": {"step": k, "x": max(1, t // 2)}, "dtype": "int16"},
        "backend": DARSHAN_MODULES["POSIX"],
        "parameters": {"transfer_size": _swept(sizes)},
        "baseline": {"transfer_size": size_value(t)},
    }


def _h5py(
    log: Log, main: Group, named: set[str], budget: int, parallel: bool, notes: list[str]
) -> dict:
    ds = max(main.datasets, key=lambda d: d.bytes_written + d.bytes_read)
    dims, shape, access = _array(ds, budget, notes)
    own = _chunk_label(ds, shape)
    aligned = "x".join(str(min(a, s)) for a, s in zip(access, shape, strict=True))
    chunks = [own, aligned] if own != aligned else [own]
    if "chunks" in named or own == "contiguous":
        chunks.append("x".join(["1", *map(str, shape[1:])]))
    n = log.nprocs
    if n > 1 and not parallel:
        notes.append(
            f"h5py here has no parallel HDF5: nprocs 1 instead of the log's {n} "
            f"(with parallel h5py set parameters.nprocs: {n})"
        )
        n = 1
    values = [_chunk_value(c) for c in dict.fromkeys(chunks)]
    params: dict[str, Any] = {
        "chunks": values if len(values) > 1 else values[0],
        "codec": "none",
        "nprocs": n,
    }
    baseline: dict[str, Any] = {"chunks": _chunk_value(own), "nprocs": n}
    # the file-level knobs the findings name, against the library's default (0: not set)
    sizes = {
        "alignment": ["0", "1MiB"],
        "meta_block_size": ["2KiB", "1MiB"],
        "page_size": ["0", "4MiB"],
    }
    params |= {k: v for k, v in sizes.items() if k in named}
    if n > 1:
        io = "collective" if ds.collective else "independent"
        params["io"] = _swept([io, "collective", "independent"] if "io" in named else [io])
        baseline["io"] = io
        params, baseline = _striping(main, named, params, baseline, notes)
    dtype = DTYPES.get(ds.itemsize, "float32")
    if ds.itemsize not in DTYPES:
        notes.append(f"element size {ds.itemsize} B has no iotune dtype: float32 instead")
    workload = {"shape": dict(zip(dims, shape, strict=True)), "dtype": dtype}
    backend = DARSHAN_MODULES["H5D"]
    return {"workload": workload, "backend": backend, "parameters": params, "baseline": baseline}


def _array(ds: Dataset, budget: int, notes: list[str]) -> tuple[list[str], list[int], list[int]]:
    """Dimensions, shape (cut to the budget) and one access of the dataset, rank 2 to 4."""
    access = [a for a in ds.access if a > 0] if 2 <= ds.ndims <= 4 else []
    if not access or len(access) != ds.ndims:
        inner = max(1, (ds.access[-1] if ds.access and ds.access[-1] > 0 else ds.npoints))
        access, ds_ndims = [1, int(inner)], 2
        if ds.ndims != 2:
            notes.append(f"{ds.ndims}-d dataset {ds.name} written as 2-d (step, x)")
    else:
        ds_ndims = ds.ndims
    rest = access[1:]
    lead = max(1, ds.npoints // math.prod(rest))
    row = math.prod(rest) * (ds.itemsize if ds.itemsize in DTYPES else 4)  # float32 otherwise
    fits = max(access[0], budget // row)
    if fits < lead:
        notes.append(f"dataset {ds.name}: {lead} steps cut to {fits} (--trial-size)")
    shape = [min(lead, fits), *rest]
    names = ["step", *["z", "y", "x"][4 - ds_ndims :]]
    access = [min(access[0], shape[0]), *rest]
    return names, shape, access


def _chunk_value(label: str) -> str | list[int]:
    """A chunk label as the spec writes it: ``contiguous`` or ``[8, 128, 128]``."""
    return label if label == "contiguous" else [int(c) for c in label.split("x")]


def _chunk_label(ds: Dataset, shape: list[int]) -> str:
    if ds.chunks is None:
        return "contiguous"
    chunks = list(ds.chunks)
    if len(chunks) < len(shape):
        chunks = [1] * (len(shape) - len(chunks)) + chunks
    return "x".join(str(min(c, s)) for c, s in zip(chunks[-len(shape) :], shape, strict=True))
