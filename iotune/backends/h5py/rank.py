"""The program every rank of a parallel HDF5 trial runs: ``python -m iotune.backends.h5py.rank``.

The workload array is cut into one block of steps along its first dimension
per rank.  Per repeat: barrier, time the collective create (``driver="mpio"``
with the trial's MPI-IO hints), the dataset's creation with the trial's
chunks and filters, this rank's block written (collectively or
independently), flush (``MPI_File_sync``) and close; barrier.  One rank per
node then evicts the file from its page cache and checks residency; every
rank reads its block back, timed the same way, and compares a crc32c with what
it wrote.  Rank 0 then checks the file with serial h5py: the layout and
filters asked for, and every value against the workload; on Lustre it reads
the file's stripe layout back with ``lfs getstripe``.

HDF5 does not hand out its MPI file handle, so the hints in effect are those
MPI-IO reports for the same file opened with the same communicator and info
right after the write (untimed).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.h5py.backend import DATASET
from iotune.measuring.checksum import checksum
from iotune.measuring.data import Field, slab_length
from iotune.mpi.launch import block_of
from iotune.mpi.rank import RankProgram, serve

FILE = "shared.h5"


class H5Rank(RankProgram):
    """One rank's block of the workload and how it moves it through parallel HDF5."""

    def __init__(self, job: dict[str, Any], comm: Any) -> None:
        from mpi4py import MPI

        from iotune.backends.h5py.backend import H5pyBackend

        H5pyBackend.import_library()  # the filters (hdf5plugin) before any file opens
        super().__init__(job, comm)
        self.path = Path(job["dir"]) / FILE
        self.collective = self.params["io"] == "collective"
        self.info = MPI.Info.Create()
        for key, value in job["hints"].items():
            self.info.Set(key, value)
        shape = self.workload.shape
        starts, sizes = block_of(self.rank, (self.size,) + (1,) * (len(shape) - 1), shape)
        self.rows = slice(starts[0], starts[0] + sizes[0])
        self.data = np.ascontiguousarray(Field(self.workload).slab(self.rows.start, self.rows.stop))
        self.crc = checksum(self.data)
        self.out = np.ones_like(self.data)  # touched now, not inside a timed read

    @property
    def files(self) -> list[Path]:
        return [self.path]

    def check(self) -> str:
        return check_file(self.path, self.params, self.workload)

    def remove(self) -> None:
        if self.rank == 0:
            self.path.unlink()

    def _open(self, mode: str) -> Any:
        from iotune.backends.h5py.backend import open_file

        options = {"comm": self.comm, "info": self.info}
        return open_file(
            self.path, mode, self.params, self.workload, driver="mpio", driver_options=options
        )

    def write(self, *, fsync: bool) -> tuple[float, float]:
        """Timed collective create, write of this rank's block, flush and close."""
        from iotune.backends.h5py.backend import create_dataset

        self.comm.Barrier()
        c0, t0 = time.process_time(), time.perf_counter()
        with self._open("w") as fh:
            dset = create_dataset(fh, self.workload, self.params)
            if self.collective:
                with dset.collective:
                    dset[self.rows] = self.data
            else:
                dset[self.rows] = self.data
            if fsync:
                fh.flush()  # H5Fflush: MPI_File_sync under the mpio driver
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        self.comm.Barrier()
        return wall, cpu

    def hints(self) -> dict[str, str]:
        """The MPI-IO hints in effect for this file opened with this job's info."""
        MPI = self.MPI
        fh = MPI.File.Open(self.comm, str(self.path), MPI.MODE_RDONLY, self.info)
        try:
            return dict(fh.Get_info().items())
        finally:
            fh.Close()

    def read(self) -> tuple[float, float, bool]:
        """Timed open, read of this rank's block and close; and the crc check."""
        # untimed: every byte differs from what the read must deliver, so a read
        # that delivers nothing cannot pass the crc on the previous repeat's bytes
        np.invert(self.data.view(np.uint8), out=self.out.view(np.uint8))
        self.comm.Barrier()
        c0, t0 = time.process_time(), time.perf_counter()
        with self._open("r") as fh:
            dset = fh[DATASET]
            if self.collective:
                with dset.collective:
                    dset.read_direct(self.out, source_sel=np.s_[self.rows])
            else:
                dset.read_direct(self.out, source_sel=np.s_[self.rows])
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        self.comm.Barrier()
        return wall, cpu, checksum(self.out) == self.crc


def check_file(path: Path, params: dict[str, Any], workload: Any) -> str:
    """Check the file's layout and every value with serial h5py; ``""`` when all match."""
    import h5py

    from iotune.backends.h5py.backend import H5pyBackend
    from iotune.core.errors import VerificationError

    try:
        H5pyBackend().verify(path, params)
    except VerificationError as err:
        return str(err)
    field = Field(workload)
    with h5py.File(path, "r") as fh:
        dset = fh[DATASET]
        step = slab_length(workload)
        for start in range(0, workload.shape[0], step):
            stop = min(start + step, workload.shape[0])
            got, want = np.ascontiguousarray(dset[start:stop]), field.slab(start, stop)
            # bytes, not values: NaN (a land mask, say) never equals itself
            if got.tobytes() != np.ascontiguousarray(want).tobytes():
                return f"{path.name} differs from the data written in steps {start}:{stop}"
    return ""


if __name__ == "__main__":
    serve(sys.argv[1], H5Rank)
