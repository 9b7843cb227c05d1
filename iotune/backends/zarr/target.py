"""The Zarr v3 apply target, written through xarray (metadata) and zarr (values).

The Dataset is the source's, undecoded, so stored values and attributes (``_FillValue``,
``scale_factor``, ``units``...) go through unchanged.  The variables written by region
are made lazy (dask) for the first ``to_zarr(compute=False)``, which then writes only
the metadata and the other variables; each block is then written into the arrays with
zarr, with ``write_empty_chunks`` as asked.  Regions are written one after the other,
or by a cluster's workers into disjoint shards, so a chunk two regions share is safe
to update (``safe_chunks=False``).  The store carries the chunks, shards and their
index location, the codec and quantisation; request concurrency is a reader's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from iotune.backends.target import TargetPlan, TargetWriter
from iotune.backends.zarr.knobs import ZarrKnobs
from iotune.core.errors import NotApplicable
from iotune.core.units import chunk_label
from iotune.model import quantize
from iotune.model.codecs import Codec, zarr_compressors
from iotune.model.quantize import zarr_filters


class ZarrTarget(TargetWriter):
    """The partial target store at ``path`` (a directory, or a zarr ``StorePath``)."""

    carried: ClassVar[tuple[str, ...]] = (
        "chunks",
        "shards",
        "shard_index",
        "codec",
        "level",
        "shuffle",
        "quantize",
        "write_empty_chunks",
    )
    #: chunk_cache is accepted for multi-format sweeps, but zarr has no chunk cache
    reader_side = ("request_concurrency", "dask_chunks", "dask_threads")
    suffixes = (".zarr",)
    file_kind = "a Zarr"
    engine = "zarr"
    measured = "measured faster than rechunker, in a sixth of its memory"
    #: written to an object store through zarr's ``StorePath`` (s3://, gs://, az://)
    object_store = True
    #: disjoint whole shards: a cluster's workers write regions at once
    parallel_regions = True

    def __init__(self, path: Path, settings: Mapping[str, Any]) -> None:
        self.path = path
        self.config = {"write_empty_chunks": ZarrKnobs.of(settings).write_empty_chunks == "on"}

    @classmethod
    def check(
        cls, settings: Mapping[str, Any], chunks: tuple[int, ...] | str, codec: Codec
    ) -> None:
        if chunks == "contiguous":
            raise NotApplicable(
                "chunks: contiguous does not apply to zarr (allowed: auto or AxBxC)"
            )
        shards = settings.get("shards")
        if shards is None or shards == "none":
            if settings.get("shard_index") is not None:
                raise NotApplicable("shard_index applies only with shards")
            return
        if not isinstance(chunks, tuple) or len(shards) != len(chunks):
            raise NotApplicable(
                f"shards: {chunk_label(shards)} need chunks of as many lengths, "
                f"not {chunk_label(chunks)}"
            )
        if any(s % c for s, c in zip(shards, chunks, strict=True)):
            raise NotApplicable(
                f"shards: {chunk_label(shards)} is not a multiple of the chunks "
                f"{chunk_label(chunks)} along every dimension"
            )

    @classmethod
    def check_variable(
        cls, q: quantize.Quantize, dtype: np.dtype[Any], attrs: Mapping[str, Any]
    ) -> None:
        """A mode Zarr lacks, or a fill value BitRound (which rounds every value) would change."""
        quantize.check_zarr(q)
        for key in ("_FillValue", "missing_value"):
            if key in attrs and not _kept_by_bitround(q, attrs[key], dtype):
                raise NotApplicable(
                    f"quantize {q.label} in zarr would change its {key} "
                    f"{np.asarray(attrs[key]).tolist()!r} (BitRound rounds every value); "
                    "keep more bits or write netcdf4"
                )

    @classmethod
    def create(cls, path: Path, plan: TargetPlan, ds: Any) -> ZarrTarget:
        """The store's metadata and the variables not written by region.

        Converted variables get the plan's chunks, shards (with their index location)
        and compressors; the others their own chunks.  A shallow copy of ``ds`` is
        changed, never ``ds``.
        """
        write_metadata(path, plan, ds)
        return cls(path, plan.settings)

    @classmethod
    def reopen(cls, path: Path, plan: TargetPlan, ds: Any) -> ZarrTarget:
        return cls(path, plan.settings)

    def _array(self, name: str, mode: str) -> Any:
        import zarr

        return zarr.open_array(self.path / name, mode=mode)

    def write_block(self, name: str, index: tuple[slice, ...], values: np.ndarray) -> None:
        import zarr

        # open_array takes no array config: zarr's global one is read as the chunks are stored
        with zarr.config.set({"array.write_empty_chunks": self.config["write_empty_chunks"]}):
            self._array(name, "r+")[index] = values

    def read_block(self, name: str, index: tuple[slice, ...]) -> np.ndarray:
        return np.asarray(self._array(name, "r")[index])

    def write(self, name: str, start: int, stop: int, values: np.ndarray) -> None:
        self.write_block(name, (slice(start, stop),) if values.ndim else (), values)

    def read(self, name: str, start: int | None = None, stop: int | None = None) -> np.ndarray:
        array = self._array(name, "r")
        return np.asarray(array[...] if start is None else array[start:stop])

    def close(self) -> None:
        """Nothing stays open between writes."""

    def storage(self, name: str) -> tuple[Any, list[str]]:
        """A variable's chunk shape and codec names as the store reports them."""
        array = self._array(name, "r")
        shards = f" in shards of {'x'.join(map(str, array.shards))}" if array.shards else ""
        codecs = "+".join(type(c).__name__ for c in array.compressors) or "none"
        return tuple(array.chunks), [codecs + shards]

    @classmethod
    def read_back(cls, path: Path | str, variable: str) -> dict[str, Any]:
        """Chunks, shards and index location, codec, quantisation, and whether chunks equal
        to the fill value were stored (when the array has such a chunk); ``path`` is a
        directory or a store's URL (``s3://...``)."""
        import fsspec
        import zarr

        fs, root = fsspec.core.url_to_fs(str(path))
        where = f"{root.rstrip('/')}/{variable}"
        array = zarr.open_array(str(path), path=variable, mode="r")
        found = stored_knobs(array)
        empty = empty_chunks(array, lambda key: bool(fs.exists(f"{where}/{key}")))
        if empty is not None:
            found["write_empty_chunks"] = empty
        return found

    @classmethod
    def reader_lines(cls, settings: Mapping[str, Any]) -> list[str]:
        lines = super().reader_lines(settings)
        concurrency = settings.get("request_concurrency")
        if concurrency is None:
            return lines
        return [f"zarr.config.set({{'async.concurrency': {int(concurrency)}}})", *lines]


def write_metadata(store: Any, plan: TargetPlan, ds: Any) -> None:
    """The store's metadata and the variables not written by region (``store``: a path or a
    zarr store).

    Converted variables get the plan's chunks, shards (with their index location)
    and compressors; the others their own chunks.  A shallow copy of ``ds`` is
    changed, never ``ds``.
    """
    ds = ds.copy()
    encoding = {v.name: _encoding(v, plan) for v in plan.variables if v.dims}
    for var in plan.variables:
        if "_FillValue" not in var.attrs and var.dims:  # else xarray adds NaN to floats
            encoding[var.name]["_FillValue"] = None
        ds[var.name].encoding = {}
    for name in ds.variables:  # lazy: values follow by region and by block
        if name not in ds.indexes and ds[name].ndim:
            ds[name] = ds[name].chunk()
    ds.to_zarr(
        store,
        mode="w",
        compute=False,
        encoding={k: v for k, v in encoding.items() if v},
        zarr_format=3,
        consolidated=False,
        safe_chunks=False,
    )


def _encoding(var: Any, plan: TargetPlan) -> dict[str, Any]:
    """``to_zarr`` encoding of one variable: the plan's storage, or its own chunks."""
    if not var.converted:
        return {"chunks": var.chunks} if isinstance(var.chunks, tuple) else {}
    found: dict[str, Any] = {
        "compressors": zarr_compressors(plan.codec, itemsize=var.dtype.itemsize)
    }
    if plan.quantize.lossy:  # BitRound rounds each region as zarr writes it
        found["filters"] = zarr_filters(plan.quantize)
    if isinstance(var.chunks, tuple):
        found["chunks"] = var.chunks
    if var.shards is not None:
        index = plan.settings.get("shard_index")
        found["shards"] = (
            var.shards if index is None else {"shape": var.shards, "index_location": index}
        )
    return found


def stored_knobs(array: Any) -> dict[str, Any]:
    """Chunks, shards and their index location, codec and quantisation of an opened array,
    as its metadata says."""
    found: dict[str, Any] = {
        "chunks": chunk_label(array.chunks),
        "shards": chunk_label(array.shards) if array.shards else "none",
        "quantize": "off",
    }
    for codec in array.metadata.codecs:
        if hasattr(codec, "index_location"):
            found["shard_index"] = str(codec.index_location.value)
    for f in array.filters:
        config: Any = dict(getattr(f, "to_dict", dict)()).get("configuration", {})
        if "keepbits" in config:
            found["quantize"] = f"bitround:{config['keepbits']}"
    return found | _codec(array.compressors)


def _codec(compressors: Any) -> dict[str, Any]:
    """``codec``, ``level`` and ``shuffle`` of the compressors (``none`` without one)."""
    configs = [c.to_dict() for c in compressors or ()]
    names = [str(c.get("name", "")).removeprefix("numcodecs.") for c in configs]
    shuffle = "byte" if "shuffle" in names else "none"
    rest = [(n, c) for n, c in zip(names, configs, strict=True) if n != "shuffle"]
    if not rest:
        return {"codec": "none", "shuffle": shuffle}
    name, config = rest[-1]
    aliases = {"gzip": "zlib", "bz2": "bzip2"}
    level = config.get("configuration", {}).get("level")
    return {"codec": aliases.get(name, name), "level": level, "shuffle": shuffle}


def empty_chunks(array: Any, exists: Callable[[str], bool]) -> str | None:
    """``on`` when a chunk equal to the fill value was stored, ``off`` when one was skipped.

    None when the array has no such chunk (nothing tells).  Sharded arrays are judged
    by their shards, unsharded ones by their chunks (files under ``c/``).
    """
    grid = array.shards or array.chunks
    fill = array.fill_value
    empty_at = []
    for index in np.ndindex(*(-(-n // c) for n, c in zip(array.shape, grid, strict=True))):
        box = tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, grid, strict=True))
        values = np.asarray(array[box])
        nan = isinstance(fill, float | np.floating) and bool(np.isnan(fill))
        if np.all(np.isnan(values) if nan else values == fill):
            empty_at.append(index)
    if not empty_at:
        return None
    stored = [exists("c/" + "/".join(map(str, i))) for i in empty_at]
    return "on" if all(stored) else "off"


def _kept_by_bitround(q: quantize.Quantize, value: Any, dtype: np.dtype[Any]) -> bool:
    from numcodecs import BitRound

    given = np.asarray(value, dtype=dtype).ravel()
    codec = BitRound(keepbits=quantize.zarr_bits(q))
    back = np.frombuffer(codec.decode(codec.encode(given.copy())), dtype=dtype)
    return bool(np.array_equal(given, back, equal_nan=True))
