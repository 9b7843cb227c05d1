"""Every knob a format's apply target carries lands in the target, as asked.

Walks the registry: for every format whose backend has a target writer
(``Backend.apply_target()``) and every knob the writer carries, ``apply`` writes a
tiny source with that knob set through ``--settings`` (the API call the command
line makes), and the writer's read-back of the file (or, for what HDF5 applies while
writing and the file does not keep, what the library applied) equals the setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iotune.app.apply import apply
from iotune.backends import backend_names, get_backend
from iotune.backends.target import TargetWriter
from iotune.model import parameters

#: representative values of each carried knob (each choice of the choice knobs), with
#: the settings they need beside them
VALUES: dict[str, list[tuple[str, str]]] = {
    "chunks": [("4x4x4", "")],
    "codec": [("zlib", ""), ("zstd", ""), ("none", "")],
    "level": [("3", "codec=zlib")],
    "shuffle": [("byte", "codec=zlib")],
    "quantize": [("bitround:10", "")],
    "fill": [("on", ""), ("off", "")],
    "format": [
        ("NETCDF4", ""),
        ("NETCDF4_CLASSIC", ""),
        ("NETCDF3_64BIT_DATA", "chunks=contiguous"),
    ],
    "alignment": [("64KiB", "")],
    "alignment_threshold": [("1KiB", "alignment=64KiB")],
    "meta_block_size": [("64KiB", "")],
    "libver": [(v, "") for v in ("earliest", "v110", "v112", "v114", "latest")],
    "page_size": [("64KiB", "")],
    "fill_time": [(v, "") for v in ("ifset", "alloc", "never")],
    # default: HDF5 chooses (incr for chunks), nothing to read back as asked
    "alloc_time": [(v, "") for v in ("early", "incr", "late")],
    "shards": [("8x8x8", "")],
    "shard_index": [(v, "shards=8x8x8") for v in ("start", "end")],
    "write_empty_chunks": [("on", ""), ("off", "")],
    # an Icechunk repository's configuration
    "inline_chunk_threshold": [("64", "")],
    "manifest_split": [("2", "")],
    "manifest_preload": [("on", ""), ("off", "")],
    "max_concurrent_requests": [("16", "")],
    "chunk_cache": [("1MiB", "")],
}


def writers() -> dict[str, type[TargetWriter]]:
    found = {n: get_backend(n).apply_target() for n in backend_names()}
    return {n: w for n, w in found.items() if w is not None}


def cases() -> list[Any]:
    out = []
    for name, writer in writers().items():
        for knob in writer.carried:
            for value, beside in VALUES.get(knob, [("", "")]):
                out.append(pytest.param(name, knob, value, beside, id=f"{name}-{knob}={value}"))
    return out


def test_every_carried_knob_has_values_to_try() -> None:
    missing = {(n, k) for n, w in writers().items() for k in w.carried if k not in VALUES}
    assert not missing, f"add representative values for {sorted(missing)}"
    assert {"netcdf4", "h5py", "zarr"} <= set(writers())


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny netCDF source: ``v`` (8, 8, 8) float32, its first half NaN (chunks equal to
    the fill value Zarr gives a float without ``_FillValue``)."""
    import netCDF4

    path = tmp_path_factory.mktemp("roundtrip") / "source.nc"
    with netCDF4.Dataset(path, "w") as nc:
        for dim in ("t", "y", "x"):
            nc.createDimension(dim, 8)
        var = nc.createVariable("v", "f4", ("t", "y", "x"))
        values = np.arange(512, dtype="f4").reshape(8, 8, 8) + 0.5
        values[:4] = np.nan
        var[:] = values
    return path


@pytest.mark.parametrize(("backend", "knob", "value", "beside"), cases())
def test_the_target_reads_back_the_asked_knob(
    source: Path, tmp_path: Path, backend: str, knob: str, value: str, beside: str
) -> None:
    writer = writers()[backend]
    target = tmp_path / f"out{writer.suffixes[0]}"
    settings = f"backend={backend} chunks=4x4x4 {beside} {knob}={value}"
    report = apply(
        None,
        source,
        target,
        settings=settings,
        variables=["v"],
        progress=False,
        measure=False,
        verify="full",
    )
    asked = _asked(knob, value)
    if knob in writer.while_writing:
        got = (report.file_properties or {}).get(knob)  # type: ignore[union-attr]
    else:
        got = writer.read_back(target, "v").get(knob)
    assert got == asked, f"{backend} {knob}={value}: read back {got!r}"


def _asked(knob: str, value: str) -> Any:
    if knob in ("chunks", "shards", "codec", "shuffle", "quantize"):
        return value
    if knob == "level" or parameters.get(knob).kind == "count":
        return int(value)
    return parameters.get(knob).parse(value, knob, None)  # type: ignore[arg-type]


#: representative values of the reader-side knobs (a reader's setting, not the file's)
READING: dict[str, tuple[str, str]] = {
    "chunk_cache": ("1MiB", ""),
    "cache_slots": ("1009", "chunk_cache=1MiB"),
    "cache_preemption": ("0.5", "chunk_cache=1MiB"),
    "sieve_buf_size": ("64KiB", ""),
    "page_buffer": ("1MiB", "page_size=64KiB"),
    "dask_chunks": ("auto", ""),
    "dask_threads": ("2", "dask_chunks=auto"),
    "request_concurrency": ("8", ""),
}


def reading_cases() -> list[Any]:
    return [
        pytest.param(name, knob, id=f"{name}-{knob}")
        for name, writer in writers().items()
        for knob in writer.reader_side
    ]


@pytest.mark.parametrize(("backend", "knob"), reading_cases())
def test_a_reader_side_knob_is_named_with_lines_that_run(
    source: Path, tmp_path: Path, backend: str, knob: str
) -> None:
    """Never dropped: apply says it is set when reading, and the lines it gives open the
    target with it."""
    import dask
    import h5py
    import netCDF4
    import xarray as xr
    import zarr

    writer = writers()[backend]
    value, beside = READING[knob]
    target = tmp_path / f"out{writer.suffixes[0]}"
    settings = f"backend={backend} chunks=4x4x4 {beside} {knob}={value}"
    report = apply(
        None, source, target, settings=settings, variables=["v"], progress=False, measure=False
    )
    assert report.reading[0].startswith("set when reading (not stored in the file): ")
    assert f"{knob} " in report.reading[0]
    assert knob not in (report.file_properties or {})  # type: ignore[union-attr]
    code = "\n".join(line.strip() for line in report.reading[1:])
    assert code, "a reader-side knob without the line that sets it"
    namespace = {
        "path": str(target),
        "xr": xr,
        "h5py": h5py,
        "dask": dask,
        "zarr": zarr,
        "netCDF4": netCDF4,
    }
    with dask.config.set({}), zarr.config.set({}):
        exec(code, namespace)
    if "f" in namespace:
        namespace["f"].close()
    if "ds" in namespace:
        assert float(namespace["ds"]["v"][-1].mean()) > 0
        namespace["ds"].close()
