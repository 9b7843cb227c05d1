"""The rank side of every launched trial: one repeat's skeleton, eviction, the report.

A backend's rank program (``python -m iotune.backends.mpiio.rank JOB``, say)
subclasses :class:`RankProgram` with how it writes, reads and checks its
files, and calls :func:`serve`.  Per repeat every rank writes (timed by the
program), one rank per node evicts the files and checks residency with
``mincore``, every rank reads back and compares a crc32c with what it wrote,
rank 0 checks the files independently and reads the stripe layout back on
Lustre, and the files are removed.  Rank 0 writes the report the parent
collects (:func:`iotune.mpi.launch.fill_result`).

A rank that fails writes its reason beside the report and aborts the job, so
the other ranks never hang in a collective call.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from iotune.core.errors import one_line
from iotune.measuring import measure
from iotune.model.spec import Workload
from iotune.mpi import lustre


def workload_of(data: dict[str, Any]) -> Workload:
    """The workload of a job description (JSON has lists where it has tuples)."""
    return Workload(**{**data, "dims": tuple(data["dims"]), "shape": tuple(data["shape"])})


class RankProgram(ABC):
    """One rank's side of a launched trial."""

    def __init__(self, job: dict[str, Any], comm: Any) -> None:
        from mpi4py import MPI

        self.MPI, self.comm, self.job = MPI, comm, job
        self.params, self.workload = job["params"], workload_of(job["workload"])
        self.rank, self.size = comm.Get_rank(), comm.Get_size()

    @property
    @abstractmethod
    def files(self) -> list[Path]:
        """Every file the trial writes (all ranks'); rank 0 sizes and stripes them."""

    @abstractmethod
    def write(self, *, fsync: bool) -> tuple[float, float]:
        """Timed write of this rank's data, between barriers: wall and CPU seconds."""

    @abstractmethod
    def hints(self) -> dict[str, str]:
        """The MPI-IO hints in effect for the file just written."""

    @abstractmethod
    def read(self) -> tuple[float, float, bool]:
        """Timed read of this rank's data: wall and CPU seconds, and the crc32c check."""

    @abstractmethod
    def check(self) -> str:
        """Rank 0: check the files independently; ``""`` when they hold what was asked."""

    @abstractmethod
    def remove(self) -> None:
        """Delete the files this rank owns (after every rank has read)."""


def evict(rank: RankProgram, files: list[Path], measure_spec: dict[str, Any]) -> tuple[str, float]:
    """One rank per node drops the files from its page cache; the worst residency wins.

    ``rank`` is any object with the ``comm`` and ``MPI`` of the job.  Returns
    the cache state (``cold``, ``warm`` or ``not-cold``) and the residency.
    """
    node = rank.comm.Split_type(rank.MPI.COMM_TYPE_SHARED)
    cache, fraction = None, 0.0
    if node.Get_rank() == 0:
        cache, fraction = measure.prepare_cache(
            files, mode=measure_spec["cache"], max_residency=measure_spec["max_cold_residency"]
        )
    node.Free()
    worst = rank.comm.allreduce(fraction, op=rank.MPI.MAX)
    states = [s for s in rank.comm.allgather(cache) if s]
    return ("not-cold" if "not-cold" in states else states[0]), worst


def repeat(program: RankProgram, job: dict[str, Any]) -> dict[str, Any] | None:
    """Measure one repeat on every rank; rank 0 returns its entry of the report."""
    w_s, w_cpu = program.write(fsync=job["measure"]["fsync"])
    hints = program.hints()
    files = program.files
    first = program.rank == 0
    stored = sum(p.stat().st_size for p in files) if first else 0
    layout = lustre.getstripe(files[0]) if first and job["striped"] else None
    cache, fraction = evict(program, files, job["measure"])
    r_s, r_cpu, crc_ok = program.read()
    gathered = program.comm.gather((w_s, w_cpu, r_s, r_cpu, crc_ok), root=0)
    check = program.check() if first else ""
    program.comm.Barrier()
    program.remove()
    program.comm.Barrier()
    if not first:
        return None
    cold = {"cache": cache, "resident_fraction": fraction}
    return report_entry(gathered, check=check, hints=hints, layout=layout, stored=stored) | cold


def report_entry(
    gathered: list[tuple], *, check: str, hints: dict, layout: Any, stored: int
) -> dict[str, Any]:
    """Rank 0's entry for one repeat from every rank's ``(write_s, write_cpu_s, read_s,
    read_cpu_s, crc_ok)``; the parent's :func:`~iotune.mpi.launch.fill_result` reads it."""
    columns = list(zip(*gathered, strict=True))
    names = ("write_s", "write_cpu_s", "read_s", "read_cpu_s", "crc_ok")
    entry: dict[str, Any] = dict(zip(names, columns, strict=True))
    return entry | {"check": check, "hints": hints, "layout": layout, "file_bytes": stored}


def serve(jobfile: str, make_rank: type[RankProgram]) -> None:
    """Run every repeat of the job in ``jobfile``; rank 0 writes the report.

    ``make_rank(job, comm)`` builds this rank's program; :func:`repeat` runs
    it once per repeat.  A rank that fails writes its reason beside the report and
    aborts the job, so the other ranks never hang in a collective call.
    """
    from mpi4py import MPI

    job = json.loads(Path(jobfile).read_text())
    comm = MPI.COMM_WORLD
    try:
        rank = make_rank(job, comm)
        repeat(rank, job)  # untimed warm-up: first-touch faults, MPI-IO and library set-up
        repeats = [repeat(rank, job) for _ in range(job["measure"]["repeats"])]
        if comm.Get_rank() == 0:
            report = {"ranks": comm.Get_size(), "repeats": repeats}
            report["library"] = MPI.Get_library_version().strip().splitlines()[0]
            tmp = Path(job["report"] + ".tmp")
            tmp.write_text(json.dumps(report))
            tmp.replace(job["report"])
    except Exception as err:  # reported to the parent; the other ranks must not hang
        where = Path(f"{job['report']}.rank{comm.Get_rank()}.error")
        where.write_text(f"rank {comm.Get_rank()}: {one_line(err)}\n")
        comm.Abort(1)
