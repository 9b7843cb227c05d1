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
  both cores, so it is for clusters of several hosts.  A collection (64 files, 8 GiB,
  2026-11-27, the machine shared, load 8-12): 443 s on a LocalCluster of 2 workers
  against 323 s serially (0.73x); ``--max-mem`` is per worker.
- **Only the codec changes** (same chunks): the region copier against ``nccopy -d``
  and ``h5repack``: neither was faster (1 GiB: 19.6 s, nccopy 21.5 s, h5repack 34.6 s),
  and neither verifies, resumes or carries a Zarr target, so they are no engine.

- **One writer fed by every core** (netCDF4 and HDF5 targets, :mod:`iotune.convert.pipeline`;
  ``benchmarks/apply_pipeline.py``, 2026-11-27, map chunks to 256x16x16 + shuffle, the
  source cold, ``--max-mem 1GiB``, medians of alternating runs; three other sessions
  kept the load average at 5-11 on the 2 cores): zlib 4, 1 GiB: **51.3 s against
  71.3 s** serial to netCDF4 (1.39x), 70.4 s against 78.0 s to HDF5; 512 MiB
  (128x16x16): 31.6 s against 36.2 s.  zlib 1, 512 MiB: 25.5 s against 24.4 s (no
  gain: cheap compression leaves the serial read and write the larger share); no
  codec, 1 GiB: 17.2 s against 13.7 s (netCDF4), 13.6 s against 14.3 s (HDF5), with up
  to 110 MiB more memory.  Peak memory of the tree with zlib: 504-514 MiB against
  489-516 MiB.  So the pipeline writes zlib from level 4 (:data:`PIPELINED`); lower
  levels, no codec, quantisation, ``auto``/``contiguous`` chunks and the codecs whose
  stored bytes it does not reproduce (zstd, bzip2, blosc, szip) are written by the
  library serially, and the report's engine line says why.  ``IOTUNE_APPLY_ENGINE=regions``
  forces the serial copier (the benchmark's baseline).

A netCDF4 target with ``--executor dask`` runs in the calling process (one writer per
file), through the pipeline where it applies; the report says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from iotune.backends.target import TargetWriter
from iotune.convert.layout import Layout
from iotune.convert.pipeline import threads
from iotune.core.errors import UsageError

EXECUTORS = ("serial", "dask")
#: ``regions``: a netCDF4/HDF5 target written by the serial region copier even where
#: the chunk pipeline applies (the benchmark's baseline, benchmarks/apply_pipeline.py)
ENGINE_ENV = "IOTUNE_APPLY_ENGINE"
#: the codec families the chunk pipeline encodes (backends/hdf5_chunks.py): the lowest
#: level it was measured faster from (None: never), the figures said when it writes and
#: when it does not (docs/benchmarks.md, "The chunk pipeline")
PIPELINED: dict[str, tuple[int | None, str, str]] = {
    "zlib": (
        4,
        "measured faster from zlib level 4 on 2 cores (1 GiB: 51 s against 71 s serial)",
        "measured no faster below zlib level 4 (level 1, 512 MiB: 25.5 s against 24.4 s)",
    ),
    "none": (None, "", "measured no faster uncompressed (1 GiB: 17.2 s against 13.7 s)"),
}


@dataclass(frozen=True)
class Engine:
    """The engine a conversion runs on, where, and the measured reason."""

    name: str
    where: str
    reason: str

    #: the memory each worker may use, said on a cluster (``--max-mem 1GiB per worker ...``)
    memory: str = ""

    def text(self) -> str:
        where = f"{self.where}; {self.memory}" if self.memory else self.where
        return f"{self.name} ({where}): {self.reason}"

    def on_workers(self, workers: int, max_mem: int) -> Engine:
        """This engine on a cluster of ``workers``, each within ``max_mem`` (``--max-mem``)."""
        from iotune.core.units import format_size

        memory = (
            f"--max-mem {format_size(max_mem)} per worker, {workers} worker"
            f"{'s' if workers != 1 else ''}"
        )
        return replace(self, memory=memory)


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
    one = f"{writer.file_kind} file has one writer, so --executor dask does not apply"
    if writer.hdf5_chunks and layout is not None:
        engine = _one_writer(writer, layout)
        if executor == "dask":
            return Engine(engine.name, engine.where, f"{one}; {engine.reason}")
        return engine
    if executor == "dask":
        return Engine("regions", "this process", f"{one}; regions run one after the other")
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
    lowest, _, slower = PIPELINED[codec.info.family]
    if lowest is None or (codec.level or 0) < lowest:
        return f"the chunk pipeline was {slower}"
    return ""
