"""What a C library's stderr line means, for the messages whose cause is known.

HDF5, netCDF-C and their filter plugins explain a failure only on stderr and return a
bare "HDF error".  :func:`cause` turns a known line into the cause in words, so a failed
trial's record says why (and what to change), not just what the library printed.
"""

from __future__ import annotations

#: (a fragment of the library's line, the cause in words)
KNOWN: tuple[tuple[str, str], ...] = (
    (
        "Buffer is uncompressible",
        # netCDF-C's H5Zblosc (as bundled by netCDF4-python 1.7) gives blosc an output
        # buffer no larger than the chunk, so blosc cannot add its 16-byte header to a
        # chunk it cannot shrink and returns 0; the filter then drops HDF5's buffer, so
        # HDF5 cannot fall back to storing the chunk unfiltered although netCDF-C
        # registers the filter as optional.  h5py and Zarr store such chunks.
        "netCDF-C's blosc filter cannot store a chunk that blosc does not shrink "
        "(noisy data without shuffle); use shuffle=byte or another codec",
    ),
)


def cause(said: str) -> str | None:
    """The cause of a known library line, or None.

    Parameters
    ----------
    said
        The first meaningful line the library wrote to stderr during the trial.
    """
    for fragment, meaning in KNOWN:
        if fragment in said:
            return meaning
    return None
