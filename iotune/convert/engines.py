"""Which engine converts a dataset, and why: chosen by measurement (docs/benchmarks.md).

Measured on this project's 2-core machine (``benchmarks/apply.py``, 2026-11-25) against
the ecosystem's engines, at the same chunks, codec and memory limit:

- **Chunks change, netCDF4 target** (map chunks to time series): the region copier
  (:mod:`iotune.convert.convert`) matches ``nccopy -c`` in time with less memory and
  beats dask ``rechunk`` + ``to_netcdf`` (method ``tasks``: slower, twice the memory;
  ``p2p``: did not finish a 256 MiB file in 10 minutes).  Both zlib-bound engines
  compress on one core: netCDF-C cannot write one file from several processes.
- **Chunks change, Zarr target**: the region copier, serially, or its regions on a
  dask cluster (``--executor dask``/``--scheduler``): regions are disjoint whole
  chunks (whole shards), so workers write them at once.  rechunker was measured
  (its own venv: it needs zarr < 3, which this project cannot install beside zarr 3)
  and is no engine here.
- **Only the codec changes** (same chunks): the region copier against ``nccopy -d``
  and ``h5repack``: neither was faster (1 GiB: 19.6 s, nccopy 21.5 s, h5repack 34.6 s),
  and neither verifies, resumes or carries a Zarr target, so they are no engine.

A netCDF4 target with ``--executor dask`` runs serially in the calling process (one
writer per file); the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.core.errors import UsageError

EXECUTORS = ("serial", "dask")


@dataclass(frozen=True)
class Engine:
    """The engine a conversion runs on, where, and the measured reason."""

    name: str
    where: str
    reason: str

    def text(self) -> str:
        return f"{self.name} ({self.where}): {self.reason}"


def choose(backend: str, *, executor: str = "serial", scheduler: str | None = None) -> Engine:
    """The engine for a target ``backend`` under ``executor`` (``dask`` with ``scheduler``).

    Raises
    ------
    UsageError
        An unknown executor.
    """
    if scheduler:
        executor = "dask"
    if executor not in EXECUTORS:
        raise UsageError(f"--executor: {executor!r}; allowed: {', '.join(EXECUTORS)}")
    if executor == "dask" and backend == "zarr":
        where = f"dask scheduler {scheduler}" if scheduler else "a local dask cluster"
        return Engine(
            "regions", where, "disjoint whole chunks (shards) written by the workers at once"
        )
    if executor == "dask":
        return Engine(
            "regions",
            "this process",
            "a netCDF4 file has one writer, so --executor dask does not apply; regions "
            "run one after the other",
        )
    reason = (
        "as fast as nccopy -c with less memory; dask rechunk + to_netcdf slower"
        if backend == "netcdf4"
        else "rechunker needs zarr < 3; dask rechunk + to_zarr holds more memory"
    )
    return Engine("regions", "this process", reason)
