"""The program every MPI rank runs: ``python -m iotune.platform.mpi_rank JOB.json``.

Per repeat: build this rank's data (untimed), barrier, time open + writes +
``MPI_File_sync`` + close, barrier; one rank per node evicts the files from
its page cache and checks residency with ``mincore``; barrier, time open +
reads + close; compare a crc32 of what this rank read with what it wrote.
Rank 0 then checks every file against the expected byte stream with plain
POSIX reads (independent of the offsets and file views the ranks used, so a
wrong offset is caught even when writes and reads agree), reads the stripe
layout back on Lustre, and writes the report the parent collects.

A rank that fails writes its reason beside the report and aborts the job.
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from iotune import measure
from iotune.platform import lustre
from iotune.platform.mpi import block_of, decompose, expected_files, pieces, stream
from iotune.spec import Workload
from iotune.workload import Field

CHECK_CHUNK = 16 * 2**20


def _workload(data: dict[str, Any]) -> Workload:
    return Workload(**{**data, "dims": tuple(data["dims"]), "shape": tuple(data["shape"])})


class Rank:
    """One rank's view of the trial: its data, its file and how it moves bytes."""

    def __init__(self, job: dict[str, Any], comm: Any) -> None:
        from mpi4py import MPI

        self.MPI, self.comm, self.job = MPI, comm, job
        self.params, self.workload = job["params"], _workload(job["workload"])
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.dir = Path(job["dir"])
        self.fpp = self.params["layout"] == "fpp"
        self.path = self.dir / (f"p{self.rank}.dat" if self.fpp else "shared.dat")
        self.collective = self.params["io"] == "collective"
        self.info = MPI.Info.Create()
        for key, value in job["hints"].items():
            self.info.Set(key, value)
        self.block3d = self.params["access"] == "block3d"
        self.data = self._block() if self.block3d else self._stream_data()
        self.crc = zlib.crc32(memoryview(self.data).cast("B"))

    def _stream_data(self) -> np.ndarray:
        self.spans = pieces(self.rank, self.params)
        field = Field(self.workload)
        data = np.concatenate([stream(self.workload, p, n, field=field) for p, n in self.spans])
        if self.fpp:  # a file of its own: the rank's pieces one after another
            starts = np.cumsum([0] + [n for _, n in self.spans[:-1]])
            self.spans = [(int(s), n) for s, (_, n) in zip(starts, self.spans, strict=True)]
        return data

    def _block(self) -> np.ndarray:
        from mpi4py.util.dtlib import from_numpy_dtype

        shape = self.workload.shape
        starts, sizes = block_of(self.rank, decompose(self.size, shape), shape)
        slab = Field(self.workload).slab(starts[0], starts[0] + sizes[0])
        inner = tuple(slice(s, s + n) for s, n in zip(starts[1:], sizes[1:], strict=True))
        etype = from_numpy_dtype(np.dtype(self.workload.dtype))
        self.etype = etype
        self.filetype = etype.Create_subarray(shape, sizes, starts).Commit()
        return np.ascontiguousarray(slab[(slice(None), *inner)])

    def _open(self, amode: int) -> Any:
        comm = self.MPI.COMM_SELF if self.fpp else self.comm
        fh = self.MPI.File.Open(comm, str(self.path), amode, self.info)
        if self.block3d:
            fh.Set_view(0, self.etype, self.filetype)
        return fh

    def _move(self, fh: Any, buf: np.ndarray, *, write: bool) -> None:
        if self.block3d:  # the whole block in one call through the subarray view, as benchio
            if write:
                (fh.Write_all if self.collective else fh.Write)(buf)
            else:
                (fh.Read_all if self.collective else fh.Read)(buf)
            return
        if write:
            call = fh.Write_at_all if self.collective else fh.Write_at
        else:
            call = fh.Read_at_all if self.collective else fh.Read_at
        flat, done = buf.reshape(-1).view(np.uint8), 0
        for offset, length in self.spans:
            call(offset, flat[done : done + length])
            done += length

    def write(self, *, fsync: bool) -> tuple[float, float, dict[str, str]]:
        """Timed write; returns wall and CPU seconds and the hints in effect."""
        MPI = self.MPI
        self.comm.Barrier()
        t0, c0 = time.perf_counter(), time.process_time()
        fh = self._open(MPI.MODE_CREATE | MPI.MODE_WRONLY)
        g0 = time.perf_counter()
        hints = dict(fh.Get_info().items())  # what the library made of the request
        spent = time.perf_counter() - g0
        self._move(fh, self.data, write=True)
        if fsync:
            fh.Sync()
        fh.Close()
        wall, cpu = time.perf_counter() - t0 - spent, time.process_time() - c0
        self.comm.Barrier()
        return wall, cpu, hints

    def read(self) -> tuple[float, float, bool]:
        """Timed read into a fresh buffer; returns wall and CPU seconds and the crc check."""
        out = np.empty_like(self.data)
        self.comm.Barrier()
        t0, c0 = time.perf_counter(), time.process_time()
        fh = self._open(self.MPI.MODE_RDONLY)
        self._move(fh, out, write=False)
        fh.Close()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        self.comm.Barrier()
        return wall, cpu, zlib.crc32(memoryview(out).cast("B")) == self.crc


def _evict(rank: Rank, files: list[Path], measure_spec: dict[str, Any]) -> tuple[str, float]:
    """One rank per node drops the files from its page cache; the worst residency wins."""
    node = rank.comm.Split_type(rank.MPI.COMM_TYPE_SHARED)
    cache, fraction = None, 0.0
    if node.Get_rank() == 0:
        cache = "warm"
        if measure_spec["cache"] == "warm":
            fraction = measure.resident_fraction(files)
        else:
            cache = "not-cold"
            for _attempt in range(3):
                measure.evict(files)
                fraction = measure.resident_fraction(files)
                if fraction <= measure_spec["max_cold_residency"]:
                    cache = "cold"
                    break
    node.Free()
    worst = rank.comm.allreduce(fraction, op=rank.MPI.MAX)
    states = [s for s in rank.comm.allgather(cache) if s]
    return ("not-cold" if "not-cold" in states else states[0]), worst


def check_files(directory: Path, params: dict[str, Any], workload: Workload) -> str:
    """Compare every file with the expected stream bytes using plain POSIX reads.

    Returns ``""`` when all match, else where the first difference is.
    """
    field = Field(workload)
    for name, start, length in expected_files(params, workload):
        path = directory / name
        size = path.stat().st_size
        if size != length:
            return f"{name} holds {size} bytes, expected {length}"
        fd = os.open(path, os.O_RDONLY)
        try:
            for offset in range(0, length, CHECK_CHUNK):
                n = min(CHECK_CHUNK, length - offset)
                got = np.frombuffer(os.pread(fd, n, offset), np.uint8)
                want = stream(workload, start + offset, n, field=field)
                if got.size != n or not np.array_equal(got, want):
                    bad = int(np.argmax(got != want[: got.size])) if got.size else 0
                    return f"{name} differs from the data written at byte {offset + bad}"
        finally:
            os.close(fd)
    return ""


def _repeat(rank: Rank, job: dict[str, Any]) -> dict[str, Any] | None:
    files = [rank.dir / name for name, _, _ in expected_files(rank.params, rank.workload)]
    w_s, w_cpu, hints = rank.write(fsync=job["measure"]["fsync"])
    stored = sum(p.stat().st_size for p in files) if rank.rank == 0 else 0
    layout = lustre.getstripe(files[0]) if rank.rank == 0 and job["striped"] else None
    cache, fraction = _evict(rank, files, job["measure"])
    r_s, r_cpu, crc_ok = rank.read()
    gathered = rank.comm.gather((w_s, w_cpu, r_s, r_cpu, crc_ok), root=0)
    check = check_files(rank.dir, rank.params, rank.workload) if rank.rank == 0 else ""
    rank.comm.Barrier()
    if rank.fpp or rank.rank == 0:
        rank.path.unlink()
    rank.comm.Barrier()
    if rank.rank != 0:
        return None
    columns = list(zip(*gathered, strict=True))
    return {
        "write_s": columns[0],
        "write_cpu_s": columns[1],
        "read_s": columns[2],
        "read_cpu_s": columns[3],
        "crc_ok": columns[4],
        "check": check,
        "hints": hints,
        "layout": layout,
        "file_bytes": stored,
        "cache": cache,
        "resident_fraction": fraction,
    }


def main(jobfile: str) -> None:
    """Run every repeat of the job in ``jobfile``; rank 0 writes the report."""
    from mpi4py import MPI

    job = json.loads(Path(jobfile).read_text())
    comm = MPI.COMM_WORLD
    try:
        rank = Rank(job, comm)
        repeats = [_repeat(rank, job) for _ in range(job["measure"]["repeats"])]
        if comm.Get_rank() == 0:
            report = {"ranks": comm.Get_size(), "repeats": repeats}
            report["library"] = MPI.Get_library_version().strip().splitlines()[0]
            tmp = Path(job["report"] + ".tmp")
            tmp.write_text(json.dumps(report))
            tmp.replace(job["report"])
    except Exception as err:  # reported to the parent; the other ranks must not hang
        from iotune.trial import one_line

        where = Path(f"{job['report']}.rank{comm.Get_rank()}.error")
        where.write_text(f"rank {comm.Get_rank()}: {one_line(err)}\n")
        comm.Abort(1)


if __name__ == "__main__":
    main(sys.argv[1])
