"""Virtual Zarr references to local netCDF4/HDF5 files: built with VirtualiZarr, opened with zarr.

The references are the store: kerchunk's JSON file or Parquet directory (Zarr format 2
metadata, each chunk a ``[file, offset, length]`` triple or, below the inline
threshold, the chunk's bytes), or an Icechunk repository whose manifests hold the
virtual chunks (Zarr format 3).  Opening them gives a zarr store whose chunk reads go
to the source files, so no byte of the data is copied.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import math
import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from iotune.core.errors import UsageError

KERCHUNK = ("kerchunk-json", "kerchunk-parquet")
#: the Icechunk branch the references are committed to
BRANCH = "main"


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence the libraries' notes that say nothing of the measurement.

    zarr warns that the numcodecs codecs HDF5 filters become are outside the Zarr 3
    spec; pandas that fastparquet is deprecated; Icechunk logs that local storage is
    not safe for concurrent commits (a trial commits once, from one process).
    """
    from zarr.errors import ZarrUserWarning

    _quiet_icechunk()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZarrUserWarning)
        warnings.simplefilter("ignore", UserWarning)
        # pandas 3 on fastparquet, kerchunk's Parquet engine: deprecations, not measurements
        warnings.filterwarnings("ignore", message=".*(fastparquet|future.infer_string)")
        yield


@functools.cache
def _quiet_icechunk() -> None:
    """Icechunk's Rust log (stderr) set to errors only, once per process."""
    import icechunk

    icechunk.set_logs_filter("error")


def virtual_dataset(sources: Sequence[Path]) -> Any:
    """The sources as one virtual ``xarray.Dataset``: every variable's chunks referenced.

    Several files are combined by their coordinates along the record dimension, as
    ``xarray.open_mfdataset(combine="by_coords")`` combines them.

    Raises
    ------
    UsageError
        A file VirtualiZarr cannot reference (not HDF5, e.g. netCDF3; a filter with no
        Zarr codec), named with the library's reason in a line.
    """
    from obspec_utils.registry import ObjectStoreRegistry
    from obstore.store import LocalStore
    from virtualizarr import open_virtual_dataset, open_virtual_mfdataset
    from virtualizarr.parsers import HDFParser

    urls = [Path(p).resolve().as_uri() for p in sources]
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    try:
        with quiet():
            if len(urls) == 1:
                return open_virtual_dataset(urls[0], registry=registry, parser=HDFParser())
            return open_virtual_mfdataset(
                urls, registry=registry, parser=HDFParser(), combine="by_coords"
            )
    # the parser's errors: HDF5's (OSError), a codec's or a layout's it cannot express
    except (OSError, ValueError, TypeError, KeyError, NotImplementedError) as err:
        raise UsageError(_unreferenceable(sources, err)) from err


def _unreferenceable(sources: Sequence[Path], err: Exception) -> str:
    said = " ".join(str(err).split()) or type(err).__name__
    where = str(sources[0]) if len(sources) == 1 else f"{sources[0].parent} ({len(sources)} files)"
    if "signature not found" in said:
        why = "not an HDF5 file (netCDF4/HDF5 only; netCDF3 and others are not referenced)"
    elif "codec not available" in said:
        codec = said.split(":", 1)[-1].strip(" '\"")
        why = f"its HDF5 filter {codec} has no Zarr codec here (netCDF4's zlib, shuffle, ... do)"
    else:
        why = said
    return f"virtual: cannot reference {where} as Zarr: {why}"


def build(vds: Any, out: Path, *, form: str, inline_threshold: int, prefix: str) -> None:
    """Write ``vds``'s references to ``out`` in ``form``.

    Parameters
    ----------
    vds
        :func:`virtual_dataset`'s Dataset.
    out
        The JSON file, Parquet directory or Icechunk repository to create.
    form
        ``kerchunk-json``, ``kerchunk-parquet`` or ``icechunk``.
    inline_threshold
        kerchunk forms: chunks of fewer bytes are stored in the references.
    prefix
        ``file://`` URL of a directory holding every source: Icechunk's virtual chunk
        container.
    """
    with quiet():
        if form in KERCHUNK:
            refs = inline(vds.vz.to_kerchunk(format="dict"), inline_threshold)
            _write_kerchunk(refs, out, parquet=form == "kerchunk-parquet")
        else:
            _write_icechunk(vds, out, prefix)


def inline(refs: dict[str, Any], threshold: int) -> dict[str, Any]:
    """``refs`` with every chunk shorter than ``threshold`` bytes copied in (base64), as
    kerchunk's ``inline_threshold`` does."""
    if threshold <= 0:
        return refs
    table = dict(refs["refs"])
    for key, value in refs["refs"].items():
        if isinstance(value, list) and len(value) == 3 and value[2] < threshold:
            with open(_local(value[0]), "rb") as f:
                chunk = os.pread(f.fileno(), value[2], value[1])
            table[key] = "base64:" + base64.b64encode(chunk).decode("ascii")
    return {**refs, "refs": table}


def _local(url: str) -> str:
    return url.removeprefix("file://")


def _write_kerchunk(refs: dict[str, Any], out: Path, *, parquet: bool) -> None:
    if not parquet:
        import ujson

        out.write_text(ujson.dumps(refs))
        return
    from kerchunk.df import refs_to_dataframe

    refs_to_dataframe(refs, str(out))


def _write_icechunk(vds: Any, out: Path, prefix: str) -> None:
    import icechunk

    config = icechunk.RepositoryConfig.default()
    store = icechunk.local_filesystem_store(prefix.removeprefix("file://"))
    config.set_virtual_chunk_container(icechunk.VirtualChunkContainer(prefix, store))
    repo = icechunk.Repository.create(
        icechunk.local_filesystem_storage(str(out)),
        config=config,
        authorize_virtual_chunk_access=icechunk.containers_credentials({prefix: None}),
    )
    session = repo.writable_session(BRANCH)
    vds.vz.to_icechunk(session.store)
    session.commit("iotune: virtual references")


def open_store(path: Path, form: str) -> Any:
    """A read-only zarr store of the references at ``path``."""
    with quiet():
        if form in KERCHUNK:
            from zarr.storage import FsspecStore

            options = {"fo": str(path), "remote_protocol": "file", "asynchronous": True}
            return FsspecStore.from_url("reference://", storage_options=options, read_only=True)
        import icechunk

        storage = icechunk.local_filesystem_storage(str(path))
        config = icechunk.Repository.fetch_config(storage)
        prefixes = (config.virtual_chunk_containers or {}) if config is not None else {}
        creds = icechunk.containers_credentials(dict.fromkeys(prefixes))
        repo = icechunk.Repository.open(storage, authorize_virtual_chunk_access=creds)
        return repo.readonly_session(BRANCH).store


def zarr_format(form: str) -> Literal[2, 3]:
    """kerchunk references are Zarr format 2, Icechunk's Zarr 3."""
    return 2 if form in KERCHUNK else 3


@dataclass(frozen=True)
class Referenced:
    """The chunks of a variable the references point at (not inlined)."""

    count: int
    #: bytes of the smallest (``inf``: none)
    smallest: float


def referenced_files(path: Path, form: str, variable: str) -> tuple[set[str], Referenced, int]:
    """The files the references point at, ``variable``'s chunks referenced, and inlined."""
    if form not in KERCHUNK:  # Icechunk stores a chunk in a manifest or as a real chunk
        store = open_store(path, form)
        with quiet():
            locations = store.session.all_virtual_chunk_locations()
        return {_local(u) for u in locations}, Referenced(len(locations), math.inf), 0
    from fsspec.implementations.reference import ReferenceFileSystem

    fs = ReferenceFileSystem(str(path), remote_protocol="file")
    files: set[str] = set()
    sizes: list[int] = []
    inlined = 0
    for key in fs.references:
        value = fs.references[key]
        if isinstance(value, list) and len(value) == 3:
            files.add(_local(value[0]))
        if not key.startswith(f"{variable}/") or key.rsplit("/", 1)[-1].startswith(".z"):
            continue
        if isinstance(value, list) and len(value) == 3:
            sizes.append(int(value[2]))
        else:
            inlined += 1
    return files, Referenced(len(sizes), min(sizes, default=math.inf)), inlined
