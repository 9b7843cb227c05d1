"""A launcher shim for tests: a parallel HDF5 read that delivers nothing after the first.

Used as ``execution.launcher: "MPIEXEC -n {nprocs} PYTHON THIS_FILE"``; the
launcher appends ``python -m iotune.backends.h5py.rank JOB``.  Each rank's
first read is real; later ones return without touching the buffer, so only a
buffer that was spoiled before each read can tell.
"""

import sys

import h5py

from iotune.backends.h5py import rank as hdf5_rank

_original = h5py.Dataset.read_direct
_calls = [0]


def _first_only(self, dest, source_sel=None, dest_sel=None):
    _calls[0] += 1
    if _calls[0] == 1:
        _original(self, dest, source_sel, dest_sel)


h5py.Dataset.read_direct = _first_only
hdf5_rank.serve(sys.argv[-1], hdf5_rank.H5Rank)
