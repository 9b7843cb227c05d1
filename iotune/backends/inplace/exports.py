"""The inplace backend's export: the xarray call that opens the source as the point read it.

The code stands alone (xarray; no iotune): ``SOURCE`` is the user's file or glob, as
the workload's ``path``.  One file is opened with ``xr.open_dataset`` (dask only with
``dask_chunks``), several with ``xr.open_mfdataset`` (always dask), as the trial did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Target
from iotune.backends.xarray_exports import dask_lines


def xarray_code(settings: Mapping[str, Any], target: Target) -> str:
    """Python that opens ``SOURCE`` with the point's engine and chunks and names the variable."""
    engine = str(settings.get("engine") or "netcdf4")
    chunks = open_chunks(settings.get("dask_chunks"))
    lines = [
        "import glob",
        "",
        "import xarray as xr",
        "",
        *dask_lines(settings),
        "files = sorted(glob.glob(SOURCE))",
        "if len(files) == 1:",
        f"    ds = xr.open_dataset(files[0], engine={engine!r}, chunks={chunks!r})",
        "else:  # the files along their record dimension (dask chunks: one file's at least)",
        "    ds = xr.open_mfdataset(",
        f'        files, engine={engine!r}, combine="by_coords", chunks={chunks or {}!r}',
        "    )",
        f"{target.variable} = ds[{target.variable!r}]",
    ]
    return "\n".join(lines)


def open_chunks(label: object) -> Any:
    """``chunks=`` of the open: None without dask, ``{}`` for the stored chunks, a mapping."""
    if label is None or label == "none":
        return None
    if label == "storage":
        return {}
    if label == "auto":
        return "auto"
    pairs = (item.partition("=") for item in str(label).split(","))
    return {dim: int(n) for dim, _, n in pairs}
