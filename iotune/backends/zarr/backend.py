"""Zarr format 3 stores through zarr-python 3.

The store is a directory holding a group with one array named ``data``, the
counterpart of the netCDF variable, so ``xarray.open_zarr`` opens it as a
Dataset with the workload's dimension names.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.backends.base import Reader, Selection, SlabBackend, Writer, check_properties
from iotune.backends.exports_base import Target, is_set, launch_makers, make_all
from iotune.backends.knobs import XARRAY_KNOBS
from iotune.backends.layout_exports import layout_makers
from iotune.backends.slab_rows import RowBuffer, incomplete_row
from iotune.backends.xarray_exports import zarr_export
from iotune.backends.xarray_open import Chunks, open_with, resolve_xarray
from iotune.backends.zarr.exports import zarr_array_code, zarr_config_code, zarr_loader_open
from iotune.backends.zarr.knobs import ZarrKnobs
from iotune.core.errors import NotApplicable, VerificationError
from iotune.core.units import chunk_label, parse_chunk_label
from iotune.measuring.data import SLAB_BUDGET, write_slab_length
from iotune.model import codecs, quantize
from iotune.model.codecs import ZARR_PYTHON
from iotune.model.readers import ReaderGroup
from iotune.model.spec import StorageSpec, Workload

VARIABLE = "data"
#: the store-level knobs, beside chunks, shards and codecs (and the chunk cache it has not),
#: and xarray's, which the store does not hold
KNOBS = tuple(
    k
    for k in ZarrKnobs.names()[ZarrKnobs.names().index("chunk_cache") + 1 :]
    if k not in XARRAY_KNOBS
)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence zarr's warning that numcodecs codecs are outside the v3 spec.

    Shuffle, zlib and bzip2 exist for Zarr 3 only as numcodecs codecs; the
    warning is raised whenever one is built or read from metadata, and it says
    nothing about the measurement.
    """
    from zarr.errors import ZarrUserWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZarrUserWarning)
        yield


def _store_like(location: Path | Any) -> Any:
    """A directory's path as zarr takes it, or a Store (object storage) as it is."""
    return str(location) if isinstance(location, Path) else location


class _ZarrWriter(Writer):
    def __init__(
        self,
        location: Path | Any,
        workload: Workload,
        params: Mapping[str, Any],
        *,
        row: int | None = None,
    ) -> None:
        import zarr

        #: slabs thinner than a row of chunks are held until the row is whole
        self._rows = None if row is None else RowBuffer(row, workload.shape[0])

        layout = _layout(params, workload.shape)
        self._config = _config(params)
        lossy = quantize.Quantize.from_params(params)
        with _quiet(), _configured(self._config):
            compressors = _compressors(params, np.dtype(workload.dtype).itemsize)
            self._group = zarr.open_group(_store_like(location), mode="w", zarr_format=3)
            self._array = self._group.create_array(
                VARIABLE,
                shape=workload.shape,
                dtype=workload.dtype,
                filters=quantize.zarr_filters(lossy) or None,
                compressors=compressors,
                dimension_names=workload.dims,
                fill_value=0,
                # Chunks equal to the fill value are otherwise skipped; unless the
                # trial says otherwise every chunk is stored, so sizes and I/O
                # compare with the other formats.
                config={"write_empty_chunks": ZarrKnobs.of(params).write_empty_chunks == "on"},
                **layout,
            )
            #: what zarr applied, for verify: the store keeps none of it
            self.applied = {
                "write_empty_chunks": "on" if self._array.config.write_empty_chunks else "off",
                "request_concurrency": zarr.config.get("async.concurrency"),
            }
            if row is not None:  # the bytes a row of chunks holds while it fills
                self.applied["write_buffer"] = row * workload.nbytes // workload.shape[0]

    def write(self, start: int, data: np.ndarray) -> None:
        pieces = [(start, data)] if self._rows is None else self._rows.add(start, data)
        for first, block in pieces:
            with _quiet(), _configured(self._config):
                self._array[first : first + block.shape[0]] = block

    def flush(self) -> None:
        """Store what the row buffer still holds (the workload's last, shorter row)."""
        for first, block in self._rows.rest() if self._rows is not None else []:
            with _quiet(), _configured(self._config):
                self._array[first : first + block.shape[0]] = block

    def close(self) -> None:
        self.flush()
        # zarr has stored every chunk by the time an assignment returns.
        self._group.store.close()


class _ZarrReader(Reader):
    def __init__(self, location: Path | Any, params: Mapping[str, Any]) -> None:
        self._array = _open_array(location)
        self._config = _config(params)

    def read(self, selection: Selection) -> np.ndarray:
        with _quiet(), _configured(self._config):
            return np.asarray(self._array[selection])

    def close(self) -> None:
        self._array.store.close()


def _row(backend: SlabBackend, workload: Workload, params: Mapping[str, Any]) -> int | None:
    """The row of chunks (or shards) the runner's slabs leave incomplete, if any."""
    budget = backend.slab_budget(params) or SLAB_BUDGET
    return incomplete_row(params, workload, write_slab_length(workload, params, budget=budget))


def _open_array(location: Path | Any) -> Any:
    import zarr

    with _quiet():
        return zarr.open_array(_store_like(location), path=VARIABLE, mode="r", zarr_format=3)


def _config(params: Mapping[str, Any]) -> dict[str, Any]:
    """zarr.config settings of the trial (``async.concurrency``), applied around each call."""
    value = params.get("request_concurrency")
    return {} if value is None else {"async.concurrency": int(value)}


def _configured(config: Mapping[str, Any]) -> contextlib.AbstractContextManager[Any]:
    """``zarr.config.set(config)``, or nothing to do when the trial sets nothing."""
    if not config:
        return contextlib.nullcontext()
    import zarr

    return zarr.config.set(dict(config))


def config_closers(params: Mapping[str, Any]) -> tuple[Any, ...]:
    """Set the trial's zarr.config for the process; return the closer that restores it.

    An xarray Dataset reads when it is computed, outside any call iotune wraps, so
    the setting holds while the Dataset is open.
    """
    config = _config(params)
    if not config:
        return ()
    import zarr

    setting = zarr.config.set(config)
    return (lambda: setting.__exit__(None, None, None),)


def open_zarr_dataset(
    store: Any, params: Mapping[str, Any], *, chunks: Chunks, consolidated: bool, closers: tuple
) -> Any:
    """``xr.open_zarr(store, chunks=..., consolidated=...)`` with the trial's zarr.config."""
    import xarray as xr

    closers = (*closers, *config_closers(params))
    options = {"zarr_format": 3, "consolidated": consolidated}
    with _quiet():
        return open_with(xr.open_zarr, store, chunks=chunks, closers=closers, options=options)


def _compressors(params: Mapping[str, Any], itemsize: int) -> list[Any] | None:
    return codecs.zarr_compressors(codecs.Codec.from_params(params), itemsize=itemsize)


def _layout(params: Mapping[str, Any], shape: tuple[int, ...]) -> dict[str, Any]:
    """``chunks`` and ``shards`` keywords of ``create_array`` for the effective labels."""
    chunks = parse_chunk_label(params["chunks"])
    if chunks == "contiguous":
        chunks = shape
    layout: dict[str, Any] = {"chunks": chunks}
    if params["shards"] != "none":
        shards: Any = parse_chunk_label(params["shards"])
        index = params.get("shard_index")
        layout["shards"] = shards if index is None else {"shape": shards, "index_location": index}
    return layout


def _check_shards(chunks: str, shards: str) -> None:
    if shards == "none":
        return
    if chunks in ("auto", "contiguous"):
        raise NotApplicable(f"shards need an explicit chunk shape, not chunks {chunks!r}")
    inner, outer = parse_chunk_label(chunks), parse_chunk_label(shards)
    assert isinstance(inner, tuple) and isinstance(outer, tuple)  # checked just above
    if any(s % c for s, c in zip(outer, inner, strict=True)):
        raise NotApplicable(
            f"shard shape {shards} is not a multiple of the chunk shape {chunks} along every "
            "dimension"
        )


class ZarrBackend(SlabBackend):
    """Zarr format 3 directory stores written and read with zarr-python 3.

    ``chunks`` is the inner chunk shape (``contiguous`` is one chunk of the
    whole array, ``auto`` zarr's own choice); ``shards`` groups chunks into
    shard files and must be a multiple of the chunk shape.  Zarr has no chunk
    cache, so ``chunk_cache`` does not apply.
    """

    name = "zarr"
    default_chunks = "iotune.backends.zarr.defaults:zarr_default_chunks"
    library = "zarr"
    suffix = ".zarr"
    knobs = ZarrKnobs
    target_writer = "iotune.backends.zarr.target:ZarrTarget"
    parameters = ZarrKnobs.names()
    description = "Zarr format 3 directory stores via zarr-python"
    #: Zarr format 3 with numcodecs' codecs: other Zarr implementations may lack some
    readers = (ReaderGroup(ZARR_PYTHON, ("zarr-python", "xarray-zarr")),)
    inapplicable = ("chunk_cache",)

    @classmethod
    def loader_open(cls, target: Target) -> tuple[str, list[str]]:
        return zarr_loader_open(target)

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The layout exports, zarr's configuration and ``create_array`` for its knobs."""
        makers = layout_makers(settings, target)
        if is_set(settings, "request_concurrency", "write_empty_chunks"):
            makers["zarr_config"] = lambda: {"text": zarr_config_code(settings)}
        if is_set(settings, "shard_index") or quantize.Quantize.from_params(settings).lossy:
            makers["zarr_create_array"] = lambda: {"text": zarr_array_code(settings, target)}
        if settings.get("dask_chunks") is not None:
            makers["xarray_open"] = lambda: zarr_export(settings, target)
        return make_all(makers | launch_makers(settings, hints))

    def __init__(self) -> None:
        # Importing zarr takes a good part of a second; paying it here keeps it
        # out of the first trial's timed open_writer.
        import zarr.codecs  # noqa: F401

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        chunks = chunk_label(params.get("chunks", ZarrKnobs.default("chunks")))
        shards = chunk_label(params.get("shards", ZarrKnobs.default("shards")))
        _check_shards(chunks, shards)
        codec, notes = codecs.resolve_params(params)
        if params.get("chunk_cache") is not None:
            notes.append("chunk_cache does not apply to zarr")
        effective = {
            "chunks": chunks,
            "shards": shards,
            "codec": codec.name,
            "level": codec.level,
            "shuffle": codec.shuffle,
            "chunk_cache": None,
        }
        effective |= {k: params[k] for k in KNOBS if k in params}
        dask, more = resolve_xarray(params)
        effective, notes = effective | dask, notes + more
        if "shard_index" in params and shards == "none":
            notes.append("shard_index applies only with shards")
            effective["shard_index"] = None
        lossy = quantize.Quantize.from_params(effective)
        quantize.check_dtype(lossy, workload.dtype)
        quantize.check_zarr(lossy)
        return effective, notes

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        writer = _ZarrWriter(path, workload, params, row=_row(self, workload, params))
        self._applied = writer.applied
        return writer

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        return _ZarrReader(path, params)

    def open_dataset(
        self,
        path: Path,
        params: Mapping[str, Any],
        *,
        chunks: Chunks,
        workload: Workload | None = None,
    ) -> Any:
        """``xr.open_zarr(path, chunks=..., consolidated=False)``: the group's ``data`` array.

        The writer consolidates nothing, so xarray is told not to look for it.
        """
        return open_zarr_dataset(str(path), params, chunks=chunks, consolidated=False, closers=())

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        return verify_array(_open_array(path), params, self._applied)


def verify_array(
    array: Any, params: Mapping[str, Any], applied: Mapping[str, Any]
) -> dict[str, Any]:
    """Check an opened array (a directory's or an object store's) against ``params``.

    ``applied``: what zarr applied while the writer was open (the store keeps none of it).
    """
    with _quiet():
        got = [c.to_dict() for c in array.compressors]
        want = [c.to_dict() for c in _compressors(params, array.dtype.itemsize) or []]
    if got != want:
        raise VerificationError(f"store compressors are {got}, asked {want}")
    layout, shards = chunk_label(array.chunks), chunk_label(array.shards or "none")
    asked = params["chunks"]
    if asked == "contiguous":
        asked = chunk_label(array.shape)
    if asked != "auto" and layout != asked:
        raise VerificationError(f"store chunking is {layout}, asked {params['chunks']}")
    if shards != params["shards"]:
        raise VerificationError(f"store shards are {shards}, asked {params['shards']}")
    stored = {"layout": layout, "shards": shards, "compressors": [c["name"] for c in got]}
    stored |= _properties(array) | dict(applied)
    asked = {k: params[k] for k in KNOBS if params.get(k) is not None}
    if "quantize" in asked:  # digits:N is stored as the bits that keep N digits
        lossy = quantize.Quantize.from_params(asked)
        asked["quantize"] = f"bitround:{quantize.zarr_bits(lossy)}" if lossy.lossy else "off"
    check_properties(stored, asked)
    if "quantize" in asked:  # the request's words, and the filter the store holds
        stored |= {"quantize_stored": stored["quantize"], "quantize": params["quantize"]}
    return stored


def _properties(array: Any) -> dict[str, Any]:
    """Shard index location and quantisation as the store's metadata says."""
    found: dict[str, Any] = {"quantize": "off"}
    for codec in array.metadata.codecs:
        if hasattr(codec, "index_location"):
            found["shard_index"] = str(codec.index_location.value)
    for f in array.filters:
        config = f.to_dict().get("configuration", {})
        if "keepbits" in config:
            found["quantize"] = f"bitround:{config['keepbits']}"
    return found
