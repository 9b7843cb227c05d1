"""The memory a conversion holds besides its regions: the interpreter and the chunk caches.

``--max-mem`` bounds the whole process tree.  The interpreter with xarray, netCDF4,
dask and zarr loaded holds about :data:`INTERPRETER_BYTES` before any data is read
(measured: 150-250 MiB resident), so the regions get what remains.  The budget is a
fixed function of ``--max-mem`` (not of the resident size measured at the time), so a
resumed run plans the same regions as the interrupted one.

HDF5 chunk caches (netCDF sources and targets): the regions are whole target chunks,
each written by one call, so the target's cache would only hold chunks already
complete until they are evicted (netCDF's default is 64 MiB per variable, counted
nowhere and measured slower: 7.9 s against 4.8 s for 1 GiB of 256x16x16 zlib chunks);
it is set to 0 for the converted variables.  Uncompressed source variables are read
with no cache either: HDF5 then reads the selection straight from the file instead of
whole chunks into the cache (1.3 s against 2.0 s for 1 GiB of 1x1024x1024 chunks read
in blocks of 64 x 256 rows).  Both caches count 0 bytes in the budget.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

#: what the interpreter and its libraries hold before the first region (an upper estimate)
INTERPRETER_BYTES = 256 * 2**20
#: chunk cache of the variables written by whole chunks and of uncompressed sources
WRITE_CACHE_BYTES = 0


def data_budget(max_mem: int) -> int:
    """The bytes the regions may hold when ``max_mem`` bounds the whole process.

    ``max_mem`` less the interpreter's estimate, never below the smaller of the two:
    a limit the interpreter alone exceeds (a test's few KB) bounds only the data.
    """
    return max(max_mem - INTERPRETER_BYTES, min(max_mem, INTERPRETER_BYTES))


def limit_text(err: Exception, *, budget: int, limit: int) -> str:
    """An error's text with the data budget it names given as the user's ``--max-mem``."""
    from iotune.core.units import format_size

    text = str(err)
    if budget == limit:
        return text
    return text.replace(
        f"--max-mem {format_size(budget)}",
        f"--max-mem {format_size(limit)} ({format_size(budget)} for data)",
    )


def netcdf_variable(var: Any) -> Any | None:
    """The netCDF4.Variable behind a variable of a Dataset opened by xarray, if any."""
    obj = getattr(getattr(var, "variable", var), "_data", None)
    for _ in range(8):
        if obj is None:
            return None
        if hasattr(obj, "get_array"):
            try:
                return obj.get_array()
            except Exception:  # a closed or remote file: leave its cache alone
                return None
        obj = getattr(obj, "array", None)
    return None


def uncached_source(ds: Any, names: Any) -> int:
    """Read the uncompressed ones of ``names`` with no chunk cache; return how many."""
    count = 0
    for name in names:
        nc = netcdf_variable(ds[name])
        if nc is None or not hasattr(nc, "filters"):
            continue
        filters = nc.filters() or {}
        if nc.chunking() == "contiguous" or any(
            filters.get(k) for k in ("zlib", "zstd", "bzip2", "blosc", "szip")
        ):
            continue
        nc.set_var_chunk_cache(size=WRITE_CACHE_BYTES)
        count += 1
    return count
