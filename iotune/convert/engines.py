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

A netCDF4 target with ``--executor dask`` runs serially in the calling process (one
writer per file); the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from iotune.backends.target import TargetWriter
from iotune.core.errors import UsageError

EXECUTORS = ("serial", "dask")


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
    writer: type[TargetWriter], *, executor: str = "serial", scheduler: str | None = None
) -> Engine:
    """The engine for a target ``writer`` under ``executor`` (``dask`` with ``scheduler``).

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
    return Engine("regions", "this process", writer.measured)
