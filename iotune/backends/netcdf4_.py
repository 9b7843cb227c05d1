"""netCDF4 files through netCDF4-python (HDF5 underneath)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune import codecs
from iotune.backends._hdf5 import resolve_layout
from iotune.backends.base import Reader, Selection, SlabBackend, Writer
from iotune.errors import VerificationError
from iotune.model.spec import Workload
from iotune.units import chunk_label, parse_chunk_label

VARIABLE = "data"


class _NCWriter(Writer):
    def __init__(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> None:
        import netCDF4

        self._ds = netCDF4.Dataset(path, "w", format="NETCDF4")
        for dim, size in zip(workload.dims, workload.shape, strict=True):
            self._ds.createDimension(dim, size)
        layout: dict[str, Any] = {}
        chunks = parse_chunk_label(params["chunks"])
        if chunks == "contiguous":
            layout["contiguous"] = True
        elif chunks != "auto":
            layout["chunksizes"] = chunks
        encoding = codecs.netcdf4_encoding(codecs.Codec.from_params(params))
        self._var = self._ds.createVariable(
            VARIABLE, workload.dtype, workload.dims, **layout, **encoding
        )
        _set_cache(self._var, params)

    def write(self, start: int, data: np.ndarray) -> None:
        self._var[start : start + data.shape[0]] = data

    def close(self) -> None:
        self._ds.close()


class _NCReader(Reader):
    def __init__(self, path: Path, params: Mapping[str, Any]) -> None:
        import netCDF4

        self._ds = netCDF4.Dataset(path, "r")
        self._var = self._ds.variables[VARIABLE]
        self._var.set_auto_maskandscale(False)
        _set_cache(self._var, params)

    def read(self, selection: Selection) -> np.ndarray:
        return np.asarray(self._var[selection])

    def close(self) -> None:
        self._ds.close()


def _set_cache(var: Any, params: Mapping[str, Any]) -> None:
    if params.get("chunk_cache") is not None:
        var.set_var_chunk_cache(size=params["chunk_cache"])


class NetCDF4Backend(SlabBackend):
    """netCDF4/HDF5 files written and read with netCDF4-python."""

    name = "netcdf4"
    library = "netCDF4"
    suffix = ".nc"
    parameters = ("chunks", "codec", "level", "shuffle", "chunk_cache", "nprocs")
    description = "netCDF4 (HDF5) files via netCDF4-python"

    @classmethod
    def parallel_support(cls) -> tuple[bool, str]:
        """Whether netCDF4 was built with parallel HDF5 or PnetCDF."""
        import netCDF4

        if not (netCDF4.__has_parallel4_support__ or netCDF4.__has_pnetcdf_support__):
            return False, (
                f"netCDF4 {netCDF4.__version__} was built without parallel HDF5 or PnetCDF "
                "(__has_parallel4_support__ and __has_pnetcdf_support__ are false)"
            )
        return False, "netCDF4 has MPI, but iotune's parallel netCDF trials are not implemented yet"

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        codec, effective, notes = resolve_layout(params, cls.parallel_support)
        codecs.netcdf4_encoding(codec)  # raises NotApplicable for what netCDF4 cannot do
        return effective, notes

    @classmethod
    def available(cls) -> tuple[bool, str]:
        ok, version = super().available()
        if not ok:
            return ok, version
        import netCDF4

        libs = f"netCDF {netCDF4.__netcdf4libversion__}, HDF5 {netCDF4.__hdf5libversion__}"
        return True, f"{version} ({libs})"

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        return _NCWriter(path, workload, params)

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        return _NCReader(path, params)

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        import netCDF4

        with netCDF4.Dataset(path, "r") as ds:
            var = ds.variables[VARIABLE]
            filters, chunking = var.filters(), var.chunking()
        layout = "contiguous" if chunking == "contiguous" else chunk_label(chunking)
        expected = codecs.netcdf4_expected_filters(codecs.Codec.from_params(params))
        wrong = {k: (filters.get(k), v) for k, v in expected.items() if filters.get(k) != v}
        if wrong:
            detail = ", ".join(f"{k}={got!r} (asked {want!r})" for k, (got, want) in wrong.items())
            raise VerificationError(f"file filters differ from the request: {detail}")
        if params["chunks"] != "auto" and layout != params["chunks"]:
            raise VerificationError(f"file chunking is {layout}, asked {params['chunks']}")
        return {"layout": layout, "filters": filters}
