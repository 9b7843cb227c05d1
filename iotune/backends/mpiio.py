"""MPI-IO with mpi4py: IOR-like transfers and benchio-like 3-D blocks from N ranks.

Unlike the other backends this one is not driven slab by slab in the trial's
process: a trial launches ``nprocs`` ranks (``mpiexec -n N`` from the
``mpich`` wheel by default, or ``execution.launcher``) that run
:mod:`iotune.platform.mpi_rank`.  Time is the slowest rank's, aggregate
throughput is all bytes over that time, as IOR reports.  Reads are measured
apart from writes, after every node evicted the files from its page cache.

Access patterns (``access``):

``contiguous``
    each rank writes ``block_size`` bytes at ``rank * block_size`` in
    ``transfer_size`` calls (IOR ``-b B -t T``);
``strided``
    the same bytes as ``block_size / transfer_size`` segments, ranks
    interleaved (IOR ``-b T -t T -s B/T``);
``block3d``
    the workload array cut into one block per rank and written through a
    subarray file view in one call, as benchio does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from iotune.backends.base import Backend, Reader, Writer
from iotune.errors import NotApplicable, UsageError, VerificationError
from iotune.spec import Workload
from iotune.units import format_size

if TYPE_CHECKING:
    from iotune.trial import TrialResult, TrialTask

MiB = 2**20
DEFAULT_TRANSFER = MiB
#: each rank holds its block in memory (generated before the timed span)
MAX_BLOCK = 2 * 2**30
_STRIPE_HINTS = {"stripe_count": "striping_factor", "stripe_size": "striping_unit"}


def _transfers(params: Mapping[str, Any], workload: Workload) -> tuple[int, int]:
    """Effective ``(transfer_size, block_size)``; by default the ranks move the workload's bytes."""
    transfer = int(params.get("transfer_size", DEFAULT_TRANSFER))
    n = int(params.get("nprocs", 1))
    block = params.get("block_size")
    if block is None:
        block = -(-workload.nbytes // (n * transfer)) * transfer
    if block % transfer:
        raise NotApplicable(
            f"block_size {format_size(block)} is not a multiple of transfer_size "
            f"{format_size(transfer)} (IOR requires it)"
        )
    if block > MAX_BLOCK:
        raise NotApplicable(f"block_size {format_size(block)} exceeds {format_size(MAX_BLOCK)}")
    return transfer, int(block)


class MpiioBackend(Backend):
    """Parallel writes and reads of one shared file or a file per process via MPI-IO."""

    name = "mpiio"
    library = "mpi4py"
    suffix = ".dat"
    parameters = (
        "nprocs",
        "transfer_size",
        "block_size",
        "layout",
        "io",
        "access",
        "hints",
        "stripe_count",
        "stripe_size",
    )
    description = "MPI-IO via mpi4py from N launched ranks (IOR / benchio-like)"
    #: trials run as launched ranks through :meth:`run_launched`, not slab by slab
    launched: ClassVar[bool] = True

    @classmethod
    def available(cls) -> tuple[bool, str]:
        import importlib.metadata

        from iotune.platform.mpi import find_mpiexec

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
        from iotune.platform.mpi import decompose

        n = int(params.get("nprocs", 1))
        layout = params.get("layout", "shared")
        io, access = params.get("io", "collective"), params.get("access", "contiguous")
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
                for key in ("transfer_size", "block_size")
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
            "block_size": block,
            "layout": layout,
            "io": io,
            "access": access,
        }
        hint_values = dict(params.get("hint_values", {}))
        for param, hint in _STRIPE_HINTS.items():
            if params.get(param) is not None and hint in hint_values:
                raise NotApplicable(f"hint set {params['hints']!r} sets {hint} and so does {param}")
        if "hints" in params:
            effective |= {"hints": params["hints"], "hint_values": hint_values}
        extra = ("stripe_count", "stripe_size", "launcher")
        effective |= {k: params[k] for k in extra if k in params}
        return effective, notes

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        raise UsageError("mpiio trials run in launched ranks (run_launched), not slab by slab")

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        raise UsageError("mpiio trials run in launched ranks (run_launched), not slab by slab")

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        raise UsageError("mpiio trials verify their files in the ranks")

    def run_launched(self, task: TrialTask, workdir: Path, result: TrialResult) -> None:
        """Launch the ranks for every repeat of ``task`` and fill ``result``.

        Raises
        ------
        VerificationError
            A rank read back other bytes than it wrote, or a file differs from
            the expected data (a wrong offset, say).
        MpiError
            The launcher or a rank failed.
        """
        from iotune.platform import lustre, mpi

        params = task.trial.params
        if int(params.get("concurrency", 1)) > 1:
            raise UsageError("concurrency does not apply to mpiio; sweep nprocs instead")
        data = workdir / "data"
        stripe = lustre.prepare(
            data, count=params.get("stripe_count"), size=params.get("stripe_size")
        )
        hints = dict(params.get("hint_values") or {})
        if stripe["applied"]:  # ROMIO's Lustre driver stripes new files from these too
            # -1 (all OSTs) and 0 (default) exist only for lfs; the directory carries them
            requested = {k: v for k, v in stripe["requested"].items() if v > 0}
            hints |= {_STRIPE_HINTS[k]: str(v) for k, v in requested.items()}
        job = {
            "params": params,
            "workload": dataclasses.asdict(task.workload),
            "measure": dataclasses.asdict(task.measure),
            "dir": str(data),
            "hints": hints,
            "striped": stripe["applied"],
        }
        report = mpi.launch(job, workdir, launcher=params.get("launcher"))
        fill_result(result, report, params=params, workload=task.workload)
        first = report["repeats"][0]
        result.stored = {
            "ranks": report["ranks"],
            "mpi_library": report["library"],
            "launcher": params.get("launcher") or mpi.DEFAULT_LAUNCHER,
            "hints_requested": hints,
            "hints_effective": first["hints"],
            "hints_ignored": {
                k: {"requested": v, "effective": first["hints"].get(k)}
                for k, v in hints.items()
                if first["hints"].get(k) != v
            },
            "stripe": {**stripe, "layout": first["layout"]},
        }


def fill_result(
    result: TrialResult, report: dict[str, Any], *, params: Mapping[str, Any], workload: Workload
) -> None:
    """Aggregate per-rank timings: the slowest rank's time, all bytes over it.

    Raises
    ------
    VerificationError
        A repeat's read-back check failed.
    """
    from iotune.platform.mpi import total_bytes

    total = total_bytes(dict(params), workload)
    block3d = params["access"] == "block3d"
    calls = 1 if block3d else int(params["block_size"]) // int(params["transfer_size"])
    ops = int(params["nprocs"]) * calls
    result.raw_bytes = total
    for rep in report["repeats"]:
        bad = [r for r, ok in enumerate(rep["crc_ok"]) if not ok]
        if bad:
            raise VerificationError(
                f"rank(s) {', '.join(map(str, bad))} read back other bytes than they wrote (crc32)"
            )
        if rep["check"]:
            raise VerificationError(f"{rep['check']} (POSIX read-back of the file)")
        slow, fast = max(rep["write_s"]), min(rep["write_s"])
        result.write.append(
            {"s": slow, "cpu_s": sum(rep["write_cpu_s"]), "MiBps": total / MiB / slow}
            | {"s_fastest_rank": fast}
        )
        slow, fast = max(rep["read_s"]), min(rep["read_s"])
        entry = {"s": slow, "cpu_s": sum(rep["read_cpu_s"]), "bytes": total, "ops": ops}
        entry |= {"MiBps": total / MiB / slow, "ops_per_s": ops / slow, "s_fastest_rank": fast}
        entry |= {"resident_fraction": rep["resident_fraction"], "cache": rep["cache"]}
        result.reads.setdefault("full", []).append(entry)
    result.file_bytes = report["repeats"][0]["file_bytes"]
