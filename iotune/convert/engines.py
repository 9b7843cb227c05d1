"""Which engine converts a dataset, and why: chosen by measurement (docs/benchmarks.md).

Measured on this project's 2-core machine (``benchmarks/apply.py``, 2026-11-25) against
the ecosystem's engines, at the same chunks, codec and memory limit:

- **Chunks change, netCDF4 target** (2 GiB, map chunks to 256x16x16 zlib): the region
  copier (:mod:`iotune.convert.convert`) 30.0 s and 488 MiB for the process tree;
  ``nccopy -c`` 34.2 s and 1114 MiB; dask ``rechunk`` (``tasks``) + ``to_netcdf``
  35.2 s and 1757 MiB; ``p2p`` did not finish (stalled, or its workers were killed).
  All compress on one core: netCDF-C writes one file from one process.
- **Chunks change, Zarr target**: the region copier 29.9 s and 525 MiB; rechunker
  (Zarr v2, its own venv: it needs zarr < 3, which cannot be installed beside this
  project's zarr 3) 51.8 s and 3071 MiB.  ``--executor dask``/``--scheduler`` writes
  the regions on a cluster's workers (disjoint whole chunks or shards, no lock); on
  this 2-core machine it was slower (58 s against 26-43 s): zarr already compresses on
  both cores, so it is for clusters of several hosts.
- **Only the codec changes** (same chunks): the region copier against ``nccopy -d``
  and ``h5repack``: neither was faster (1 GiB: 19.6 s, nccopy 21.5 s, h5repack 34.6 s),
  and neither verifies, resumes or carries a Zarr target, so they are no engine.

A netCDF4 target with ``--executor dask`` runs serially in the calling process (one
writer per file); the report says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from iotune.backends.target import TargetWriter
from iotune.convert.layout import Layout
from iotune.convert.pipeline import threads
from iotune.core.errors import UsageError

EXECUTORS = ("serial", "dask")
#: ``regions``: a netCDF4/HDF5 target written by the serial region copier even where
#: the chunk pipeline applies (the benchmark's baseline, benchmarks/apply_pipeline.py)
ENGINE_ENV = "IOTUNE_APPLY_ENGINE"
#: the codec families the chunk pipeline writes: measured faster than the serial
#: writer or not, and the figures (docs/benchmarks.md)
PIPELINED = {
    "zlib": (True, "PENDING"),
    "none": (True, "PENDING"),
}


@dataclass(frozen=True)
class Engine:
    """The engine a conversion runs on, where, and the measured reason."""

    name: str
    where: str
    reason: str

    def text(self) -> str:
        return f"{self.name} ({self.where}): {self.reason}"


def choose(
    writer: type[TargetWriter],
    *,
    executor: str = "serial",
    scheduler: str | None = None,
    layout: Layout | None = None,
) -> Engine:
    """The engine for a target ``writer`` under ``executor`` (``dask`` with ``scheduler``).

    A netCDF4/HDF5 ``writer`` (``hdf5_chunks``) with ``layout``'s codec one the chunk
    pipeline encodes and was measured faster with gets the pipeline; else the report
    says why its one writer compresses serially.

    Raises
    ------
    UsageError
        An unknown executor.
    """
    if scheduler:
        executor = "dask"
    if executor not in EXECUTORS:
        raise UsageError(f"--executor: {executor!r}; allowed: {', '.join(EXECUTORS)}")
    if executor == "dask" and writer.parallel_regions:
        where = f"dask scheduler {scheduler}" if scheduler else "a local dask cluster"
        return Engine(
            "regions",
            where,
            "disjoint whole chunks (shards) written by the workers at once (helps with "
            "several hosts; on one 2-core host serial was faster)",
        )
    if executor == "dask":
        return Engine(
            "regions",
            "this process",
            f"{writer.file_kind} file has one writer, so --executor dask does not apply; "
            "regions run one after the other",
        )
    if writer.hdf5_chunks and layout is not None:
        return _one_writer(writer, layout)
    return Engine("regions", "this process", writer.measured)


def _one_writer(writer: type[TargetWriter], layout: Layout) -> Engine:
    """The chunk pipeline where it applies and was measured faster, else the regions."""
    why = not_pipelined(layout)
    if os.environ.get(ENGINE_ENV) == "regions":
        why = f"{ENGINE_ENV}=regions"
    if why:
        return Engine("regions", "this process", f"{writer.measured}; serial: {why}")
    how = f"{threads()} threads compress the chunks, one writer stores them"
    return Engine("pipeline", "this process", f"{how}; {PIPELINED[layout.codec.info.family][1]}")


def not_pipelined(layout: Layout) -> str:
    """Why the chunk pipeline does not write ``layout`` (empty: it does)."""
    codec = layout.codec
    if layout.lossy.lossy:
        return f"quantize {layout.quantize}: the library quantises inside its writer"
    if isinstance(layout.chunks, str):
        return f"chunks {layout.chunks}: the library lays them out"
    if codec.info.family not in PIPELINED:
        return (
            f"codec {codec.name}: the chunk pipeline does not produce its stored bytes "
            "(only zlib and none are proven identical to the library's)"
        )
    if codec.shuffle not in ("none", "byte"):
        return f"shuffle {codec.shuffle}: HDF5 has no such filter outside blosc"
    faster, figures = PIPELINED[codec.info.family]
    return "" if faster else f"the chunk pipeline was measured no faster ({figures})"
