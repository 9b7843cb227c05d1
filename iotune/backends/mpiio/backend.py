"""MPI-IO with mpi4py: IOR-like transfers and benchio-like 3-D blocks from N ranks.

Unlike the other backends this one is not driven slab by slab in the trial's
process: a trial launches ``nprocs`` ranks (``mpiexec -n N`` from the
``mpich`` wheel by default, or ``execution.launcher``) that run
:mod:`iotune.backends.mpiio.rank`.  Time is the slowest rank's, aggregate
throughput is all bytes over that time, as IOR reports.  Reads are measured
apart from writes, after every node evicted the files from its page cache.

Access patterns (``access``):

``contiguous``
    each rank writes ``bytes_per_rank`` bytes at ``rank * bytes_per_rank`` in
    ``transfer_size`` calls (IOR ``-b B -t T``);
``strided``
    the same bytes as ``bytes_per_rank / transfer_size`` segments, ranks
    interleaved (IOR ``-b T -t T -s B/T``);
``block3d``
    the workload array cut into one block per rank and written through a
    subarray file view in one call, as benchio does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.base import LaunchedBackend
from iotune.backends.exports_base import Target, launch_makers, make_all
from iotune.backends.layout_exports import layout_makers
from iotune.backends.mpiio.knobs import MpiioKnobs
from iotune.core.errors import NotApplicable
from iotune.core.units import format_size
from iotune.model.records import HINT_VALUES
from iotune.model.spec import StorageSpec, Workload

#: each rank holds its block in memory (generated before the timed span)
MAX_BLOCK = 2 * 2**30


def _transfers(params: Mapping[str, Any], workload: Workload) -> tuple[int, int]:
    """Effective ``(transfer_size, bytes_per_rank)``; by default the ranks move all the bytes."""
    transfer = int(params.get("transfer_size", MpiioKnobs.default("transfer_size")))
    n = int(params.get("nprocs", MpiioKnobs.default("nprocs")))
    block = params.get("bytes_per_rank")
    if block is None:
        block = -(-workload.nbytes // (n * transfer)) * transfer
    if block % transfer:
        raise NotApplicable(
            f"bytes_per_rank {format_size(block)} is not a multiple of transfer_size "
            f"{format_size(transfer)} (IOR requires it)"
        )
    if block > MAX_BLOCK:
        raise NotApplicable(f"bytes_per_rank {format_size(block)} exceeds {format_size(MAX_BLOCK)}")
    return transfer, int(block)


class MpiioBackend(LaunchedBackend):
    """Parallel writes and reads of one shared file or a file per process via MPI-IO."""

    name = "mpiio"
    library = "mpi4py"
    extra = "mpi"
    suffix = ".dat"
    knobs = MpiioKnobs
    parameters = MpiioKnobs.names()
    description = "MPI-IO via mpi4py from N launched ranks (IOR / benchio-like)"
    rank_program = "iotune.backends.mpiio.rank"

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Striping and MPI-IO hints (and the layout exports, for an HDF5 file)."""
        return make_all(layout_makers(settings, target) | launch_makers(settings, hints))

    @classmethod
    def available(cls) -> tuple[bool, str]:
        import importlib.metadata

        from iotune.mpi.launch import find_mpiexec

        ok, version = super().available()
        if not ok:
            return ok, version
        mpiexec = find_mpiexec()
        if mpiexec is None:
            return False, "no mpiexec beside Python or on PATH (set execution.launcher)"
        try:
            mpi = f"mpich wheel {importlib.metadata.version('mpich')}"
        except importlib.metadata.PackageNotFoundError:
            mpi = "system MPI"
        return True, f"{version} ({mpi}, {mpiexec})"

    @classmethod
    def parallel_support(cls) -> tuple[bool, str]:
        """Whether trials may use ``nprocs > 1``, and why not."""
        ok, detail = cls.available()
        return ok, "MPI-IO" if ok else detail

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        from iotune.mpi.launch import check_stripe_hints, decompose, merge_typed_hints

        n = int(params.get("nprocs", MpiioKnobs.default("nprocs")))
        layout = params.get("layout", MpiioKnobs.default("layout"))
        io = params.get("io", MpiioKnobs.default("io"))
        access = params.get("access", MpiioKnobs.default("access"))
        notes: list[str] = []
        if access == "block3d":
            if layout == "fpp":
                raise NotApplicable("block3d writes one global array to a shared file")
            try:
                decompose(n, workload.shape)
            except ValueError as err:
                raise NotApplicable(str(err)) from err
            notes += [
                f"{key} does not apply to block3d (one call per rank, as benchio)"
                for key in ("transfer_size", "bytes_per_rank")
                if key in params
            ]
            transfer: int | None = None
            block: int | None = None
        else:
            transfer, block = _transfers(params, workload)
        if layout == "fpp" and access == "strided":
            notes.append("strided interleaves ranks in a shared file; each fpp file is contiguous")
            access = "contiguous"
        if layout == "fpp" and io == "collective":
            notes.append("collective I/O needs a shared file; fpp files are independent")
            io = "independent"
        effective: dict[str, Any] = {
            "nprocs": n,
            "transfer_size": transfer,
            "bytes_per_rank": block,
            "layout": layout,
            "io": io,
            "access": access,
        }
        typed, hint_values = merge_typed_hints(params, dict(params.get(HINT_VALUES) or {}))
        check_stripe_hints(params, hint_values)
        if "hints" in params or typed:
            effective |= typed | {"hints": params.get("hints", "default"), HINT_VALUES: hint_values}
        extra = ("stripe_count", "stripe_size")
        effective |= {k: params[k] for k in extra if k in params}
        return effective, notes

    def launched_bytes(self, params: Mapping[str, Any], workload: Workload) -> int:
        from iotune.mpi.launch import total_bytes

        return total_bytes(dict(params), workload)

    def launched_ops(self, params: Mapping[str, Any]) -> int:
        if params["access"] == "block3d":
            return int(params["nprocs"])  # one call per rank, as benchio
        return int(params["nprocs"]) * int(params["bytes_per_rank"] // params["transfer_size"])
