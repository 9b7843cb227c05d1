"""The example logs that ship with pydarshan, found where the package is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

darshan = pytest.importorskip("darshan")

PACKAGE = Path(darshan.__file__).parent
EXAMPLES = PACKAGE / "examples" / "example_logs"
INPUTS = PACKAGE / "tests" / "input"
#: POSIX + MPI-IO + LUSTRE, 2048 ranks writing one shared file collectively
MPIIO_LOG = EXAMPLES / "example.darshan"
#: POSIX + MPI-IO + H5F + H5D + LUSTRE, IOR's HDF5 API from 4 ranks
HDF5_LOG = EXAMPLES / "ior_hdf5_example.darshan"
#: MACSio writing HDF5 through MPI-IO from 16 ranks, no LUSTRE records
MACSIO_LOG = EXAMPLES / "shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158.darshan"
#: LUSTRE and STDIO only
NOPOSIX_LOG = EXAMPLES / "noposix.darshan"
#: IOR, a file per process from 2048 ranks through POSIX
FPP_LOG = EXAMPLES / "sample-badost.darshan"


def counters(path: Path, module: str, kind: str = "counters"):
    """pydarshan's own DataFrame of a module, read independently of iotune."""
    report = darshan.DarshanReport(str(path), read_all=True)
    return report.records[module].to_df()[kind], report.name_records
