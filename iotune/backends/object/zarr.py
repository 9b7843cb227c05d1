"""Zarr format 3 on an object store, through obstore or fsspec (``client``).

The same arrays as :mod:`iotune.backends.zarr.backend` (a group with one array
``data``), in a store zarr-python reaches through ``zarr.storage.ObjectStore``
(obstore) or ``FsspecStore`` (s3fs), each request metered
(:mod:`iotune.objectstore.clients`).  ``request_concurrency`` is zarr's
``async.concurrency``: how many chunk requests one read or write has in
flight.  ``consolidated`` stores the group's metadata in its root
``zarr.json`` so a reader opens it with one GET, as xarray's ``open_zarr`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iotune.backends import exports_base
from iotune.backends.base import Reader, Writer
from iotune.backends.exports_base import launch_makers, make_all
from iotune.backends.layout_exports import layout_makers
from iotune.backends.object import exports as object_exports
from iotune.backends.object.base import ObjectStoreBackend
from iotune.backends.object.knobs import ZarrObjectKnobs, ZarrStoreKnobs
from iotune.backends.xarray_open import METER_KEY, Chunks
from iotune.backends.zarr.backend import (
    VARIABLE,
    ZarrBackend,
    _quiet,
    _row,
    _ZarrReader,
    _ZarrWriter,
    open_zarr_dataset,
    verify_array,
)
from iotune.model.spec import StorageSpec, Workload
from iotune.objectstore.meter import Meter


def _zarr_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The trial's parameters as the local Zarr backend reads them (async.concurrency)."""
    translated = {k: v for k, v in params.items() if k not in ZarrStoreKnobs.names()}
    return translated | {"request_concurrency": int(params["request_concurrency"])}


class _Writer(_ZarrWriter):
    def __init__(
        self,
        store: Any,
        workload: Workload,
        params: Mapping[str, Any],
        meter: Meter,
        *,
        row: int | None,
    ) -> None:
        self.meter = meter
        self._consolidate = params["consolidated"] == "on"
        super().__init__(store, workload, _zarr_params(params), row=row)

    def close(self) -> None:
        self.flush()
        if self._consolidate:
            import zarr

            with _quiet():
                zarr.consolidate_metadata(self._group.store)
        _close(self._group.store)

    def traffic(self) -> dict[str, Any]:
        return self.meter.summary()


def _close(store: Any) -> None:
    from iotune.objectstore.clients import close_fsspec

    store.close()
    if hasattr(store, "fs"):  # FsspecStore: s3fs keeps its connections otherwise
        close_fsspec(store.fs)


class _Reader(_ZarrReader):
    def __init__(self, store: Any, params: Mapping[str, Any], meter: Meter) -> None:
        import zarr

        self.meter = meter
        # through the group, as xarray opens a store: its metadata first, then the array's
        with _quiet():
            group = zarr.open_group(
                store, mode="r", zarr_format=3, use_consolidated=params["consolidated"] == "on"
            )
            self._array = group[VARIABLE]
        self._config = {"async.concurrency": int(params["request_concurrency"])}

    def close(self) -> None:
        _close(self._array.store)

    def traffic(self) -> dict[str, Any]:
        return self.meter.summary()


class ZarrObjectBackend(ObjectStoreBackend):
    """Zarr format 3 stores on the sweep's object store (obstore or fsspec)."""

    name = "zarr-object"
    default_chunks = "iotune.backends.zarr.defaults:zarr_default_chunks"
    suffix = ".zarr"
    knobs = ZarrObjectKnobs
    parameters = ZarrObjectKnobs.names()
    inapplicable = ZarrBackend.inapplicable
    description = "Zarr format 3 on object storage via zarr's ObjectStore or FsspecStore"
    readers = ZarrBackend.readers

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: exports_base.Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The layout exports, then writing and reading the store as measured."""
        found = object_exports.object_makers(
            settings, target, storage, object_exports.ZARR, defaults=ZarrStoreKnobs.defaults()
        )
        return make_all(layout_makers(settings, target) | found | launch_makers(settings, hints))

    @classmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        effective, notes = ZarrBackend.resolve(params, workload)
        own = {k: params.get(k, d) for k, d in ZarrStoreKnobs.defaults().items()}
        return effective | own, notes

    def _store(self, path: Path, params: Mapping[str, Any], meter: Meter, *, read_only: bool):
        from iotune.objectstore.clients import zarr_store

        return zarr_store(
            self.target, self.key(path), client=params["client"], meter=meter, read_only=read_only
        )

    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        meter = Meter()
        store = self._store(path, params, meter, read_only=False)
        writer = _Writer(store, workload, params, meter, row=_row(self, workload, params))
        self._applied = writer.applied
        return writer

    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        meter = Meter()
        return _Reader(self._store(path, params, meter, read_only=True), params, meter)

    def open_dataset(
        self,
        path: Path,
        params: Mapping[str, Any],
        *,
        chunks: Chunks,
        workload: Workload | None = None,
    ) -> Any:
        """``xr.open_zarr`` on a new metered store of the trial's client (consolidated or not).

        The Meter of its requests is ``ds.encoding["iotune_meter"]``
        (:func:`iotune.backends.xarray_open.traffic`).
        """
        meter = Meter()
        store = self._store(path, params, meter, read_only=True)
        config = _zarr_params(params)
        consolidated = params["consolidated"] == "on"
        ds = open_zarr_dataset(
            store,
            config,
            chunks=chunks,
            consolidated=consolidated,
            closers=(lambda: _close(store),),
        )
        ds.encoding[METER_KEY] = meter
        return ds

    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        import zarr

        store = self._store(path, params, Meter(), read_only=True)
        try:
            with _quiet():
                array = zarr.open_array(store, path=VARIABLE, mode="r", zarr_format=3)
            stored = verify_array(array, _zarr_params(params), self._applied)
            consolidated = _consolidated(store)
        finally:
            _close(store)
        objects = self.objects(path)
        stored |= {"objects": len(objects), "client": params["client"]}
        stored["consolidated"] = "on" if consolidated else "off"
        if stored["consolidated"] != params["consolidated"]:
            from iotune.core.errors import VerificationError

            raise VerificationError(
                f"consolidated metadata is {stored['consolidated']}, asked {params['consolidated']}"
            )
        return stored


def _consolidated(store: Any) -> bool:
    import zarr

    with _quiet():
        # None: the consolidated metadata is loaded when the store holds some (False would
        # skip it, and the group would never show any)
        group = zarr.open_group(store, mode="r", zarr_format=3, use_consolidated=None)
    return group.metadata.consolidated_metadata is not None
