"""netCDF-C's own chunk layout for a variable created without ``chunksizes`` (the
``library`` baseline of a sweep), read back from what the library wrote."""

from __future__ import annotations

import tempfile
from pathlib import Path

from iotune.core.errors import NotApplicable
from iotune.model import codecs
from iotune.model.spec import Workload


def netcdf_default_chunks(workload: Workload, codec: codecs.Codec) -> str | tuple[int, ...]:
    """netCDF-C's layout for a variable created without ``chunksizes``, read back.

    ``contiguous`` when the library leaves it so (no filter and no unlimited
    dimension: iotune's workloads have none), else its default chunk shape.
    """
    import netCDF4

    with (
        tempfile.TemporaryDirectory(prefix="iotune-default-") as tmp,
        netCDF4.Dataset(Path(tmp) / "default.nc", "w", format="NETCDF4") as ds,
    ):
        for dim, size in zip(workload.dims, workload.shape, strict=True):
            ds.createDimension(dim, size)
        try:
            var = ds.createVariable(
                "data", workload.dtype, workload.dims, **codecs.netcdf4_encoding(codec)
            )
        except (RuntimeError, ValueError) as err:  # a filter this netCDF-C lacks
            raise NotApplicable(f"netCDF-C cannot create {codec.name}: {err}") from err
        chunking = var.chunking()
    return "contiguous" if chunking == "contiguous" else tuple(int(c) for c in chunking)
