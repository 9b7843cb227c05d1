"""The example logs that ship with pydarshan, found where the package is installed."""

from __future__ import annotations

import struct
import zlib
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


#: logs captured here with darshan-runtime 3.5.0 (tests/fixtures/darshan/README.md)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "darshan"
#: 4 ranks writing 1 MiB blocks collectively through MPI-IO to one file, format 3.41
IOR_LIKE_LOG = FIXTURES / "ior-like-mpiio.darshan"
#: a Python application writing one netCDF-4 file, with its interpreter's files
PYTHON_LOG = FIXTURES / "python-netcdf4.darshan"


def rebuilt(path: Path, edit) -> bytes:
    """A 3.10/3.21 log whose decompressed regions went through ``edit(region, data)``.

    Each region is recompressed as one zlib stream and the region map rewritten,
    so the result passes every byte-level check: what ``edit`` broke is inside.
    """
    data = path.read_bytes()
    maps = [struct.unpack_from("<QQ", data, 24 + 16 * i) for i in range(17)]
    spans = [("job", 360, maps[0][0] - 360)] + [(i, o, n) for i, (o, n) in enumerate(maps) if n]
    out = bytearray(data[:360])
    for key, off, length in spans:
        raw, plain = data[off : off + length], b""
        while raw:
            d = zlib.decompressobj()
            plain += d.decompress(raw)
            raw = d.unused_data
        packed = zlib.compress(edit(key, plain))
        if key != "job":
            maps[key] = (len(out), len(packed))
        out += packed
    for i, (off, length) in enumerate(maps):
        struct.pack_into("<QQ", out, 24 + 16 * i, off, length)
    return bytes(out)


def flipped(path: Path, *flips: tuple[int, int]) -> bytes:
    """``path``'s bytes with the bits of each ``(offset, mask)`` flipped."""
    data = bytearray(path.read_bytes())
    for at, mask in flips:
        data[at] ^= mask
    return bytes(data)


#: noposix.darshan with one bit flipped in its name records: darshan-util 3.5 then
#: dies of SIGSEGV ("Invalid Lustre module version number (got 0)"), found by the fuzz
CRASHER = (NOPOSIX_LOG, (5111, 0x40))
