"""Exports of the object-store backends: the client calls that store and read as measured.

Each export is Python to paste, built for one grid point's effective parameters
(``settings``) and the store the sweep measured (a
:class:`~iotune.model.spec.StorageSpec`): the store is constructed with the
arguments iotune's own clients get (:mod:`iotune.objectstore.target`), less
iotune's timeouts, retries and metering.  Objects are named after the variable
below the spec's prefix (``s3://bucket/prefix/tas.zarr``), not the run's own
area, which the run removed.  No export holds a credential: the clients read
them from the environment (or ``~/.aws``), and every export says so.

- ``zarr-object``: ``zarr.create_array`` on zarr's ``ObjectStore`` or ``FsspecStore``,
  ``async.concurrency``, consolidation; reading with ``xr.open_zarr``;
- ``hdf5-object``, ``netcdf4-object``: the upload (``put_file``), h5py and xarray reads
  on an s3fs file (cache type, block size, page buffer);
- ``object``: ``obstore.put`` in parts, ranged GETs, ``get_ranges`` coalescing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from iotune.backends import xarray_exports
from iotune.backends.exports_base import Makers
from iotune.backends.h5py import exports as h5py_exports
from iotune.core.errors import NotApplicable
from iotune.core.units import format_size, parse_chunk_label
from iotune.model import codecs, quantize
from iotune.model.spec import StorageSpec

#: where the exports put objects when no store is known (settings alone): edit before use
PLACEHOLDER = StorageSpec("s3://BUCKET/PREFIX")
#: the environment each scheme's clients read their credentials from
_CREDENTIALS = {
    "s3": "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; or ~/.aws",
    "gs": "GOOGLE_APPLICATION_CREDENTIALS or GOOGLE_SERVICE_ACCOUNT",
    "az": "AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY or other AZURE_*",
}
_OBSTORE_CLASSES = {"s3": "S3Store", "gs": "GCSStore", "az": "AzureStore"}


def object_key(storage: StorageSpec, name: str) -> str:
    """The key of ``name`` below the storage's prefix (a path below ``file://``'s root)."""
    return f"{storage.prefix}/{name}" if storage.prefix and storage.scheme != "file" else name


def credentials_lines(storage: StorageSpec, *, obstore: bool = False) -> list[str]:
    """The comment every export starts with: where the credentials come from."""
    if storage.anonymous or storage.scheme == "file":
        return ["# credentials: none (anonymous access or a local directory)"]
    lines = [f"# credentials: from the environment ({_CREDENTIALS[storage.scheme]}), never here"]
    if obstore and storage.scheme == "s3":  # unlike s3fs, obstore never reads ~/.aws itself
        lines.append(
            "# obstore reads only AWS_* variables; for ~/.aws add "
            "credential_provider=obstore.auth.boto3.Boto3CredentialProvider()"
        )
    return lines


def _header(storage: StorageSpec, *imports: str, obstore: bool = False) -> list[str]:
    """Credentials comment, then ``import`` lines."""
    return [*credentials_lines(storage, obstore=obstore), *(f"import {m}" for m in imports)]


def _size_arg(name: str, nbytes: Any, what: str) -> str:
    """``    name=N,  # 8MiB what``: a keyword argument line with the size as a label."""
    return f"    {name}={int(nbytes)},  # {format_size(int(nbytes))} {what}"


# --- the clients ------------------------------------------------------------------


def obstore_lines(storage: StorageSpec, prefix: str, *, name: str = "store") -> list[str]:
    """``obstore.store.S3Store(...)`` (or GCS, Azure, local) as ``name``, at ``prefix``."""
    if storage.scheme == "file":
        root = f"{storage.prefix}/{prefix}" if prefix else storage.prefix
        return [f"{name} = obstore.store.LocalStore({root!r}, mkdir=True)"]
    args = [repr(storage.bucket)]
    if prefix:
        args.append(f"prefix={prefix!r}")
    if storage.scheme == "s3":
        args += [f"endpoint={storage.endpoint!r}"] if storage.endpoint else []
        args += [f"region={storage.region!r}"] if storage.region else []
    if storage.anonymous:
        args.append("skip_signature=True")
    if storage.endpoint and storage.endpoint.startswith("http://"):
        args.append("client_options={'allow_http': True}")  # obstore refuses plain HTTP otherwise
    return [f"{name} = obstore.store.{_OBSTORE_CLASSES[storage.scheme]}({', '.join(args)})"]


def s3fs_options(storage: StorageSpec) -> dict[str, Any]:
    """``s3fs.S3FileSystem`` keywords (fsspec's ``storage_options``) for the store.

    Raises
    ------
    NotApplicable
        The store is not S3: the s3fs exports are written for ``s3://`` only.
    """
    if storage.scheme != "s3":
        raise NotApplicable(f"the s3fs exports are written for s3://, not {storage.scheme}://")
    client: dict[str, Any] = {}
    if storage.endpoint:
        client["endpoint_url"] = storage.endpoint
    if storage.region:
        client["region_name"] = storage.region
    options: dict[str, Any] = {"anon": storage.anonymous}
    return options | ({"client_kwargs": client} if client else {})


def s3fs_line(storage: StorageSpec) -> str:
    """``fs = s3fs.S3FileSystem(...)``."""
    args = ", ".join(f"{k}={v!r}" for k, v in s3fs_options(storage).items())
    return f"fs = s3fs.S3FileSystem({args})"


# --- zarr-object --------------------------------------------------------------------


def zarr_store_lines(
    settings: Mapping[str, Any], storage: StorageSpec, key: str, *, read_only: bool = False
) -> list[str]:
    """``store = ...``: zarr's ObjectStore over obstore, or FsspecStore (``client``)."""
    ro = ", read_only=True" if read_only else ""
    if settings["client"] == "fsspec":
        url = f"s3://{storage.bucket}/{key}"
        options = s3fs_options(storage)
        return [
            f"store = zarr.storage.FsspecStore.from_url({url!r}, storage_options={options!r}{ro})"
        ]
    objects = obstore_lines(storage, key, name="objects")
    return [*objects, f"store = zarr.storage.ObjectStore(objects{ro})"]


def zarr_config_line(settings: Mapping[str, Any]) -> str:
    """``zarr.config.set``: the requests in flight per read or write (``async.concurrency``)."""
    concurrency = int(settings["request_concurrency"])
    return f"zarr.config.set({{'async.concurrency': {concurrency}}})  # requests in flight"


def zarr_create_args(settings: Mapping[str, Any], target: Any) -> list[str]:
    """``zarr.create_array`` arguments: layout, filters, codecs, dimensions, config."""
    args = ["store", f"name={target.variable!r}", f"shape={tuple(target.shape)}"]
    args.append(f"dtype={target.dtype!r}")
    chunks = parse_chunk_label(str(settings.get("chunks") or "auto"))
    if chunks != "auto":  # auto: zarr's own guess, as the backend leaves it
        args.append(f"chunks={tuple(target.shape) if chunks == 'contiguous' else chunks}")
    if settings.get("shards") not in (None, "none"):
        shards = parse_chunk_label(str(settings["shards"]))
        index = settings.get("shard_index")
        args.append(f"shards={shards if not index else {'shape': shards, 'index_location': index}}")
    lossy = quantize.zarr_filters(quantize.Quantize.from_params(settings))
    if lossy:
        made = ", ".join(
            f"zarr.codecs.numcodecs.{type(f).__name__}(**{f.codec_config!r})" for f in lossy
        )
        args.append(f"filters=[{made}]")
    codec = codecs.resolve_params(settings)[0]
    calls = [c.code() for c in codecs.zarr_codecs(codec, itemsize=_itemsize(target))]
    args.append(f"compressors=[{', '.join(calls)}]" if calls else "compressors=None")
    args.append(f"dimension_names={tuple(target.dims)}")
    if settings.get("write_empty_chunks"):
        args.append(f"config={{'write_empty_chunks': {settings['write_empty_chunks'] == 'on'}}}")
    return args


def _zarr_header(settings: Mapping[str, Any], storage: StorageSpec) -> list[str]:
    if settings["client"] == "fsspec":
        return _header(storage, "zarr", "zarr.storage")
    return _header(storage, "obstore.store", "zarr", "zarr.storage", obstore=True)


def zarr_write_code(settings: Mapping[str, Any], target: Any, storage: StorageSpec) -> str:
    """Python that creates the array on the store as measured (then ``arr[...] = data``)."""
    key = object_key(storage, f"{target.variable}.zarr")
    lines = _zarr_header(settings, storage)
    if quantize.Quantize.from_params(settings).lossy:
        lines.append("import zarr.codecs.numcodecs")
    lines += [zarr_config_line(settings), *zarr_store_lines(settings, storage, key)]
    lines.append(f"arr = zarr.create_array({', '.join(zarr_create_args(settings, target))})")
    lines.append("# arr[...] = data")
    if settings.get("consolidated") == "on":
        lines.append("zarr.consolidate_metadata(store)  # after the last array is created")
    lines.append(
        "# or with xarray: ds.to_zarr(store, zarr_format=3, encoding=encoding, "
        f"consolidated={settings.get('consolidated') == 'on'})"
    )
    return "\n".join(lines)


def zarr_read_code(settings: Mapping[str, Any], target: Any, storage: StorageSpec) -> str:
    """Python that opens the store with xarray as measured (consolidated or not)."""
    key = object_key(storage, f"{target.variable}.zarr")
    lines = [*_zarr_header(settings, storage), "import xarray as xr", zarr_config_line(settings)]
    lines += zarr_store_lines(settings, storage, key, read_only=True)
    consolidated = settings.get("consolidated") == "on"
    lines += xarray_exports.dask_lines(settings)
    chunks = xarray_exports.chunks_argument(settings, target)
    lines.append(f"ds = xr.open_zarr(store, consolidated={consolidated}{chunks})")
    return "\n".join(lines)


# --- hdf5-object --------------------------------------------------------------------


def hdf5_upload_code(settings: Mapping[str, Any], target: Any, storage: StorageSpec) -> str:
    """Python that uploads the local file ``path`` in parts, as measured."""
    remote = f"{storage.bucket}/{object_key(storage, f'{target.variable}.h5')}"
    lines = [*_header(storage, "s3fs"), s3fs_line(storage)]
    lines.append("# path: the local file, written as the h5py export above writes it")
    if settings.get("page_size"):
        size = int(settings["page_size"])
        lines.append(f"# or a file written without paging, rewritten: h5repack -S PAGE -G {size}")
    lines += [
        "fs.put_file(",
        "    path,",
        f"    {remote!r},",
        _size_arg("chunksize", settings["part_size"], "parts"),
        f"    max_concurrency={int(settings['request_concurrency'])},  # parts in flight",
        ")",
    ]
    return "\n".join(lines)


def _open_line(settings: Mapping[str, Any], storage: StorageSpec, target: Any) -> str:
    remote = f"{storage.bucket}/{object_key(storage, f'{target.variable}.h5')}"
    cache, block = settings["cache_type"], int(settings["read_block_size"])
    return (
        f'f = fs.open({remote!r}, "rb", cache_type={cache!r}, block_size={block})'
        f"  # {format_size(block)} per GET"
    )


def _read_side(settings: Mapping[str, Any], target: Any) -> dict[str, Any]:
    """h5py's read-side access properties (page buffer, chunk cache); ``{}`` when unset."""
    try:
        return dict(h5py_exports.xarray_h5netcdf_open(settings, target)["driver_kwds"])
    except NotApplicable:
        return {}


def hdf5_read_code(settings: Mapping[str, Any], target: Any, storage: StorageSpec) -> str:
    """Python that reads the object with h5py on an s3fs file, as measured."""
    args = ['f, "r"', *(f"{k}={v!r}" for k, v in _read_side(settings, target).items())]
    lines = [*_header(storage, "h5py", "s3fs"), s3fs_line(storage)]
    lines += [_open_line(settings, storage, target), f"h5 = h5py.File({', '.join(args)})"]
    lines.append(f"dset = h5[{target.variable!r}]")
    return "\n".join(lines)


def hdf5_xarray_code(settings: Mapping[str, Any], target: Any, storage: StorageSpec) -> str:
    """Python that opens the object with xarray (h5netcdf) on an s3fs file, as measured."""
    driver = _read_side(settings, target)
    shown = "engine='h5netcdf'" + (f", driver_kwds={driver!r}" if driver else "")
    lines = [*_header(storage, "s3fs", "xarray as xr"), s3fs_line(storage)]
    lines += xarray_exports.dask_lines(settings)
    shown += xarray_exports.chunks_argument(settings, target)
    lines += [_open_line(settings, storage, target), f"ds = xr.open_dataset(f, {shown})"]
    return "\n".join(lines)


# --- object ---------------------------------------------------------------------------


def _object_head(storage: StorageSpec, *imports: str) -> list[str]:
    return _header(storage, *imports, "obstore", "obstore.store", obstore=True)


def _object_store(storage: StorageSpec) -> list[str]:
    """``store = ...`` at the storage's prefix: keys are then the object's own name."""
    return obstore_lines(storage, storage.prefix if storage.scheme != "file" else "")


def object_put_code(settings: Mapping[str, Any], target: Any, storage: StorageSpec) -> str:
    """``obstore.put`` of the file ``path`` in ``part_size`` parts, several at once."""
    lines = [*_object_head(storage, "pathlib"), *_object_store(storage)]
    lines += [
        "obstore.put(",
        "    store,",
        f"    {f'{target.variable}.bin'!r},",
        "    pathlib.Path(path),  # the local file",
        _size_arg("chunk_size", settings["part_size"], "parts"),
        f"    max_concurrency={int(settings['request_concurrency'])},  # parts in flight",
        ")",
    ]
    return "\n".join(lines)


def object_get_code(settings: Mapping[str, Any], target: Any, storage: StorageSpec) -> str:
    """A full read as measured: ranged GETs of ``part_size``, ``request_concurrency`` in flight."""
    part = int(settings["part_size"])
    lines = [*_object_head(storage, "asyncio"), *_object_store(storage)]
    lines += [
        "",
        "",
        "async def get_all(key: str) -> bytes:",
        "    size = (await obstore.head_async(store, key))['size']",
        f"    part = {part}  # {format_size(part)} per GET",
        f"    limit = asyncio.Semaphore({int(settings['request_concurrency'])})  # GETs in flight",
        "",
        "    async def get(start: int) -> bytes:",
        "        async with limit:",
        "            end = min(start + part, size)",
        "            return await obstore.get_range_async(store, key, start=start, end=end)",
        "",
        "    return b''.join(await asyncio.gather(*(get(s) for s in range(0, size, part))))",
        "",
        "",
        f"data = asyncio.run(get_all({f'{target.variable}.bin'!r}))",
    ]
    return "\n".join(lines)


def object_get_ranges_code(settings: Mapping[str, Any], target: Any, storage: StorageSpec) -> str:
    """``obstore.get_ranges`` of a selection's byte runs (``starts``, ``lengths``), coalesced."""
    gap = int(settings["coalesce"])
    lines = [*_object_head(storage), *_object_store(storage)]
    lines += [
        "# starts, lengths: the byte runs of a selection (C order, itemsize bytes per value)",
        f"pieces = obstore.get_ranges(store, {f'{target.variable}.bin'!r}, starts=starts, "
        f"lengths=lengths, coalesce={gap})  # runs under {format_size(gap)} apart: one GET",
    ]
    return "\n".join(lines)


def _complete(settings: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The settings with the backend's defaults where a hand-made dict leaves a knob out."""
    return {**defaults, **{k: v for k, v in settings.items() if v is not None}}


def object_makers(
    settings: Mapping[str, Any],
    target: Any,
    storage: StorageSpec | None,
    makers: Mapping[str, Callable[[dict[str, Any], Any, StorageSpec], str]],
    *,
    defaults: Mapping[str, Any],
) -> Makers:
    """``makers`` as exports of one point on ``storage`` (default :data:`PLACEHOLDER`).

    ``defaults``: the backend's object-store knobs (``resolve`` fills them in, so a
    measured point has them; a hand-made settings dict may not).
    """
    where, full = storage or PLACEHOLDER, _complete(settings, defaults)
    return {n: functools.partial(_text, make, full, target, where) for n, make in makers.items()}


def _text(
    make: Callable[[dict[str, Any], Any, StorageSpec], str],
    settings: dict[str, Any],
    target: Any,
    storage: StorageSpec,
) -> dict[str, Any]:
    return {"text": make(settings, target, storage)}


#: the export makers of each kind of object (``object_makers``' ``makers``)
ZARR = {"zarr_object_write": zarr_write_code, "zarr_object_read": zarr_read_code}
#: a netCDF-4 file is an HDF5 file: uploaded and read alike
HDF5 = {
    "hdf5_object_upload": hdf5_upload_code,
    "hdf5_object_read": hdf5_read_code,
    "hdf5_object_xarray": hdf5_xarray_code,
}
RAW = {
    "object_put": object_put_code,
    "object_get": object_get_code,
    "object_get_ranges": object_get_ranges_code,
}


def _itemsize(target: Any) -> int:
    import numpy as np

    return int(np.dtype(target.dtype).itemsize)
