"""Opening a trial's stored array the way its users open it: as an ``xarray.Dataset``.

Each format that xarray reads opens through the engine its users name
(``netcdf4``, ``h5netcdf``, ``zarr``), and the dask chunks are what
``open_dataset(chunks=...)`` takes: ``None`` (no dask), ``"auto"`` (dask's
guess), a ``{dim: n}`` mapping, or ``"storage"``, one dask chunk per stored
chunk.  ``storage`` is xarray's ``chunks={}``: each dimension is chunked as the
engine reports the stored chunks (its ``preferred_chunks``), and a dimension
the file does not chunk (contiguous storage) is one dask chunk.

What a backend opens besides the Dataset (an fsspec file, a store, a library
setting it changes for the process) is closed with the Dataset: the closers
given to :func:`open_with` run after xarray's own ``close``.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from iotune.core.errors import UsageError

#: the variable every backend stores, as a Dataset holds it
VARIABLE = "data"
#: iotune's own words for ``chunks``, beside None and a ``{dim: n}`` mapping
CHUNK_WORDS = ("auto", "storage")
#: where an object-store backend leaves the Meter of a Dataset's requests (``ds.encoding``)
METER_KEY = "iotune_meter"

#: what ``open_dataset`` takes as ``chunks``
Chunks = str | Mapping[str, int] | None


def check_chunks(chunks: Chunks) -> None:
    """Raise UsageError unless ``chunks`` is None, ``auto``, ``storage`` or ``{dim: n >= 1}``."""
    if chunks is None or chunks in CHUNK_WORDS:
        return
    if isinstance(chunks, Mapping) and all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 1
        for k, v in chunks.items()
    ):
        return
    raise UsageError(
        f"chunks {chunks!r}: expected none, auto, storage or a mapping {{dim: n}} of "
        "positive integers"
    )


def xarray_chunks(chunks: Chunks) -> Any:
    """The ``chunks=`` argument of ``xarray.open_dataset`` for iotune's ``chunks``."""
    check_chunks(chunks)
    if chunks == "storage":
        return {}  # xarray: the engine's preferred chunks, which are the stored ones
    if isinstance(chunks, Mapping):
        return dict(chunks)
    return chunks


def open_with(
    opener: Callable[..., Any],
    source: Any,
    *,
    chunks: Chunks,
    closers: tuple[Callable[[], None], ...] = (),
    options: Mapping[str, Any] | None = None,
) -> Any:
    """``opener(source, chunks=..., **options)``, closing ``closers`` with the Dataset.

    The closers also run when the open fails, so nothing is left open.
    """
    try:
        ds = opener(source, chunks=xarray_chunks(chunks), **dict(options or {}))
    except BaseException:
        _close_quietly(closers)
        raise
    if closers:
        # xarray keeps the callable that closes its backend store in ``_close``: it runs
        # first, then what the backend opened around it
        own = getattr(ds, "_close", None)
        ds.set_close(lambda: _run(((own,) if own else ()) + closers))
    return ds


def _run(closers: tuple[Callable[[], None], ...]) -> None:
    """Call every closer, even when one raises; the first error is raised after all ran."""
    error: BaseException | None = None
    for close in closers:
        try:
            close()
        except BaseException as err:
            error = error or err
    if error is not None:
        raise error


def _close_quietly(closers: tuple[Callable[[], None], ...]) -> None:
    """Close after a failed open: the open's error is the one to report, not a closer's."""
    with contextlib.suppress(Exception):
        _run(closers)


@contextlib.contextmanager
def closing_on_error(closers: list[Callable[[], None]]) -> Iterator[None]:
    """Run ``closers`` if the block raises (a partly opened source is closed)."""
    try:
        yield
    except BaseException:
        _close_quietly(tuple(closers))
        raise


def stored_chunks(ds: Any, variable: str = VARIABLE) -> dict[str, int]:
    """The stored chunk shape of ``variable`` by dimension (a dimension's length if unchunked)."""
    var = ds[variable]
    preferred = var.encoding.get("preferred_chunks") or {}
    found = {}
    for dim, size in zip(var.dims, var.shape, strict=True):
        step = preferred.get(dim)
        found[str(dim)] = int(step) if isinstance(step, int) else int(size)
    return found


def dask_chunks(ds: Any, variable: str = VARIABLE) -> dict[str, int] | None:
    """The dask chunk shape of ``variable`` by dimension (its first chunk); None without dask."""
    var = ds[variable]
    if var.chunks is None:
        return None
    return {str(dim): int(sizes[0]) for dim, sizes in zip(var.dims, var.chunks, strict=True)}


def split_dims(ds: Any, variable: str = VARIABLE) -> list[str]:
    """Dimensions along which a dask chunk boundary falls inside a stored chunk.

    Such a Dataset reads some stored chunks more than once (xarray warns "The
    specified chunks separate the stored chunks"); an empty list: aligned, or no dask.
    """
    var = ds[variable]
    if var.chunks is None:
        return []
    stored = stored_chunks(ds, variable)
    split = []
    for dim, sizes in zip(var.dims, var.chunks, strict=True):
        bounds = itertools.accumulate(sizes[:-1])
        if any(b % stored[str(dim)] for b in bounds):
            split.append(str(dim))
    return split


def traffic(ds: Any) -> dict[str, Any] | None:
    """Requests sent for ``ds`` so far (an object-store backend's); None: local files."""
    meter = ds.encoding.get(METER_KEY)
    return None if meter is None else dict(meter.summary())


def resolve_xarray(params: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The effective ``dask_chunks`` and ``dask_threads`` of a trial, and notes.

    Only the knobs a trial names appear, so trials without them keep their ids;
    ``dask_threads`` means nothing without dask chunks and becomes None (its grid
    points then share one trial).
    """
    chunks, threads = params.get("dask_chunks"), params.get("dask_threads")
    effective: dict[str, Any] = {} if chunks is None else {"dask_chunks": chunks}
    notes: list[str] = []
    if threads is not None and chunks in (None, "none"):
        notes.append("dask_threads applies only with dask_chunks other than none")
        if chunks is not None:
            effective["dask_threads"] = None
    elif threads is not None:
        effective["dask_threads"] = threads
    return effective, notes


def chunks_from_label(label: str | None) -> Chunks:
    """A ``dask_chunks`` label (``time=24,y=8``, ``storage``) as ``open_dataset`` takes it."""
    if label is None or label == "none":
        return None
    if label in CHUNK_WORDS:
        return label
    pairs = (item.partition("=") for item in label.split(","))
    return {dim: int(n) for dim, _, n in pairs}
