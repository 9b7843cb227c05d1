"""A launcher shim for tests: ranks write each other's blocks (a wrong-offset bug).

Used as ``execution.launcher: "mpiexec -n {nprocs} PYTHON THIS_FILE"``; the
launcher appends ``python -m iotune.backends.mpiio.rank JOB``.  Each rank's data
is right but lands at the mirror rank's offsets, in writes and reads alike, so
every per-rank checksum agrees; only a check of the file itself can tell.
"""

import sys

from iotune.backends.mpiio import rank as mpi_rank

_original = mpi_rank.Rank._plan_stream


def _mirrored(self):
    _original(self)
    self.spans = mpi_rank.pieces(self.size - 1 - self.rank, self.params)


mpi_rank.Rank._plan_stream = _mirrored
mpi_rank.serve(sys.argv[-1], mpi_rank.Rank)
