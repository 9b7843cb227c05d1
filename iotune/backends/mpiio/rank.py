"""The program every rank of an MPI-IO trial runs: ``python -m iotune.backends.mpiio.rank JOB``.

Per repeat: build this rank's data (untimed), barrier, time open + writes +
``MPI_File_sync`` + close, barrier; one rank per node evicts the files from
its page cache and checks residency with ``mincore``; barrier, time open +
reads + close; compare a crc32c of what this rank read with what it wrote.
Rank 0 then checks every file against the expected byte stream with plain
POSIX reads (independent of the offsets and file views the ranks used, so a
wrong offset is caught even when writes and reads agree), reads the stripe
layout back on Lustre, and writes the report the parent collects.

A rank that fails writes its reason beside the report and aborts the job.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from iotune.measuring.checksum import checksum
from iotune.measuring.data import Field
from iotune.model.spec import Workload
from iotune.mpi.launch import block_of, decompose, expected_files, pieces, stream
from iotune.mpi.rank import RankProgram, serve

CHECK_CHUNK = 16 * 2**20
#: bytes a rank moves between barriers: one reused buffer, as IOR's transfer buffer
WINDOW = 32 * 2**20


class Rank(RankProgram):
    """One rank's view of the trial: its data, its file and how it moves bytes.

    Contiguous and strided access stream the rank's bytes through one reused
    window buffer, as IOR reuses its transfer buffer: the data of a window is
    made outside the timed span, then all ranks pass a barrier and time only
    their MPI-IO calls.  (Holding a whole block in memory cost a third of the
    write speed here: page-cache pages then had to come from memory never
    touched before.)  ``block3d`` writes its block in one call through the
    subarray view, as benchio does.
    """

    def __init__(self, job: dict[str, Any], comm: Any) -> None:
        from mpi4py import MPI

        super().__init__(job, comm)
        self.dir = Path(job["dir"])
        self.fpp = self.params["layout"] == "fpp"
        self.path = self.dir / (f"p{self.rank}.dat" if self.fpp else "shared.dat")
        self.collective = self.params["io"] == "collective"
        self.info = MPI.Info.Create()
        for key, value in job["hints"].items():
            self.info.Set(key, value)
        self.block3d = self.params["access"] == "block3d"
        self.field = Field(self.workload)
        if self.block3d:
            self.data = self._block()
            self.crc = checksum(self.data)
        else:
            self._plan_stream()

    def _plan_stream(self) -> None:
        self.sources = pieces(self.rank, self.params)  # positions in the workload stream
        self.spans = list(self.sources)  # offsets in the file
        if self.fpp:  # a file of its own: the rank's pieces one after another
            starts = np.cumsum([0] + [n for _, n in self.sources[:-1]])
            self.spans = [(int(s), n) for s, (_, n) in zip(starts, self.sources, strict=True)]
        self.windows: list[list[int]] = []
        current: list[int] = []
        size = 0
        for k, (_, n) in enumerate(self.sources):
            if current and size + n > WINDOW:
                self.windows.append(current)
                current, size = [], 0
            current.append(k)
            size += n
        self.windows.append(current)
        largest = max(sum(self.sources[k][1] for k in w) for w in self.windows)
        self.buffer = np.ones(largest, np.uint8)  # touched now, not inside a timed call
        self.crc = 0
        for window in self.windows:
            self.crc = checksum(self._fill(window), self.crc)

    def _fill(self, window: list[int]) -> memoryview:
        done = 0
        for k in window:
            position, n = self.sources[k]
            self.buffer[done : done + n] = stream(self.workload, position, n, field=self.field)
            done += n
        return self.buffer[:done].data

    def _block(self) -> np.ndarray:
        from mpi4py.util.dtlib import from_numpy_dtype

        shape = self.workload.shape
        starts, sizes = block_of(self.rank, decompose(self.size, shape), shape)
        slab = self.field.slab(starts[0], starts[0] + sizes[0])
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

    def _calls(self, fh: Any, *, write: bool) -> Any:
        if self.block3d:
            if write:
                return fh.Write_all if self.collective else fh.Write
            return fh.Read_all if self.collective else fh.Read
        if write:
            return fh.Write_at_all if self.collective else fh.Write_at
        return fh.Read_at_all if self.collective else fh.Read_at

    def _stream(self, fh: Any, *, write: bool) -> tuple[float, int]:
        """Move every window; returns the seconds spent in MPI-IO calls and the crc32c."""
        call, spent, crc = self._calls(fh, write=write), 0.0, 0
        for window in self.windows:
            if write:
                view = self._fill(window)
            else:
                # untimed: flip every byte the buffer still holds (the last window
                # written or read), so a read that delivers nothing fails the crc
                np.invert(self.buffer, out=self.buffer)
                view = self.buffer.data
            self.comm.Barrier()  # untimed: every rank starts the window together
            t0, done = time.perf_counter(), 0
            for k in window:
                offset, n = self.spans[k]
                call(offset, view[done : done + n])
                done += n
            spent += time.perf_counter() - t0
            if not write:
                crc = checksum(view[:done], crc)
        return spent, crc

    @property
    def files(self) -> list[Path]:
        return [self.dir / name for name, _, _ in expected_files(self.params, self.workload)]

    def hints(self) -> dict[str, str]:
        return self._hints

    def check(self) -> str:
        found = check_files(self.dir, self.params, self.workload)
        return f"{found} (POSIX read-back of the file)" if found else ""

    def remove(self) -> None:
        if self.fpp or self.rank == 0:
            self.path.unlink()

    def write(self, *, fsync: bool) -> tuple[float, float]:
        """Timed write; returns wall and CPU seconds (the hints in effect are kept)."""
        MPI = self.MPI
        self.comm.Barrier()
        c0 = time.process_time()
        t0 = time.perf_counter()
        fh = self._open(MPI.MODE_CREATE | MPI.MODE_WRONLY)
        wall = time.perf_counter() - t0
        self._hints = dict(fh.Get_info().items())  # what the library made of the request
        if self.block3d:
            t0 = time.perf_counter()
            self._calls(fh, write=True)(self.data)
            wall += time.perf_counter() - t0
        else:
            wall += self._stream(fh, write=True)[0]
        t0 = time.perf_counter()
        if fsync:
            fh.Sync()
        fh.Close()
        wall += time.perf_counter() - t0
        cpu = time.process_time() - c0
        self.comm.Barrier()
        return wall, cpu

    def read(self) -> tuple[float, float, bool]:
        """Timed read; returns wall and CPU seconds and the crc check."""
        # touched before the timer, and every byte unlike what the read must deliver
        out = np.invert(self.data) if self.block3d else None
        self.comm.Barrier()
        c0 = time.process_time()
        t0 = time.perf_counter()
        fh = self._open(self.MPI.MODE_RDONLY)
        if self.block3d:
            self._calls(fh, write=False)(out)
            fh.Close()
            wall = time.perf_counter() - t0
            crc = checksum(out)
        else:
            wall = time.perf_counter() - t0
            spent, crc = self._stream(fh, write=False)
            t0 = time.perf_counter()
            fh.Close()
            wall += spent + time.perf_counter() - t0
        cpu = time.process_time() - c0
        self.comm.Barrier()
        return wall, cpu, crc == self.crc


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


if __name__ == "__main__":
    serve(sys.argv[1], Rank)
