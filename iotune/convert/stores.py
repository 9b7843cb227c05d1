"""Sources and targets of ``iotune apply`` on object stores (``s3://``, ``gs://``, ``az://``).

Reached through fsspec (s3fs, gcsfs, adlfs) built by the object-store backends'
:class:`~iotune.objectstore.target.Target`, so credentials and endpoints come from
where they come for a sweep: the environment (``AWS_*`` and ``AWS_ENDPOINT_URL``,
``GOOGLE_*`` and ``STORAGE_EMULATOR_HOST``, ``AZURE_STORAGE_*``) or the user's files
(``~/.aws``), never a URL or a flag.

Objects have no rename, so a Zarr target is written at its final prefix and made
a store last: the root ``zarr.json`` is held in the object ``TARGET.iotune-partial``
while the regions are written and verified, and PUT at ``TARGET/zarr.json`` only then
(:meth:`Location.zarr_store` with ``held``).  Until that PUT no reader opens the
target as a Zarr store.
The journal is the object ``TARGET.iotune-journal``, rewritten whole after each region
(objects cannot be appended; it is a few bytes per region), so a conversion can be
resumed from another machine.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iotune.convert.journal import JOURNAL_VERSION, RegionJournal
from iotune.convert.source import FILE, STORE, Source
from iotune.core.errors import UsageError

#: the object stores ``apply`` reads and writes
STORE_SCHEMES = ("s3", "gs", "az")
#: the root metadata key a held store keeps aside
ROOT = "zarr.json"


def is_url(text: object) -> bool:
    """Whether ``text`` names an object on a store (``s3://``, ``gs://``, ``az://``)."""
    return isinstance(text, str) and text.split("://", 1)[0] in STORE_SCHEMES and "://" in text


def unfolded(path: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """The URL a ``Path`` folded (``s3:/bucket/x`` back to ``s3://bucket/x``), else ``path``."""
    text = os.fspath(path)
    scheme, _, rest = text.partition(":/")
    if scheme in STORE_SCHEMES and rest and not rest.startswith("/"):
        return f"{scheme}://{rest}"
    return path


@dataclass
class Location:
    """An object or prefix on a store, and a synchronous fsspec filesystem that reaches it."""

    url: str
    fs: Any
    target: Any  # iotune.objectstore.target.Target
    #: the asynchronous filesystems of the Zarr stores opened here, closed by :meth:`close`
    opened: list[Any] = field(default_factory=list)

    @classmethod
    def of(cls, url: str, *, flag: str) -> Location:
        """The location of ``url``; ``flag`` names it in errors (``source``, ``-o``).

        Raises
        ------
        UsageError
            The URL names no object, or its bucket does not exist or cannot be reached.
        """
        from iotune.model.spec import StorageSpec
        from iotune.objectstore.target import Target

        url = url.rstrip("/")
        spec = StorageSpec(url)
        if not spec.bucket or not spec.prefix:
            raise UsageError(f"{flag} {url}: names no object; expected {spec.scheme}://bucket/path")
        target = Target(spec)
        try:
            fs = target.fsspec()
        except ImportError as err:
            raise UsageError(
                f"{flag} {url}: {spec.scheme}:// needs {err.name or err} (pip install "
                "'iotune[objectstore]')"
            ) from err
        except Exception as err:  # adlfs refuses missing credentials when made
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise UsageError(f"{flag} {url}: {first}") from err
        where = cls(url, fs, target)
        where.check_bucket(flag)
        return where

    def sibling(self, suffix: str) -> Location:
        """The object ``URL + suffix`` beside this one, through the same filesystem."""
        return Location(self.url + suffix, self.fs, self.target, self.opened)

    @property
    def path(self) -> str:
        """The path fsspec takes (``bucket/key``)."""
        return self.url.split("://", 1)[1]

    @property
    def bucket(self) -> str:
        return self.path.split("/", 1)[0]

    def close(self) -> None:
        """Close the connections of the filesystems opened here, while their loops run.

        Each client closes its own when collected, which at exit comes after the
        event loop stopped: aiohttp would print "Unclosed client session".
        """
        adlfs = any(hasattr(fs, "service_client") for fs in [*self.opened, self.fs])
        while self.opened:
            _close(self.opened.pop())
        _close(self.fs)
        if adlfs:
            _detach_finalizers(None)

    def check_bucket(self, flag: str) -> None:
        from iotune.objectstore.check import explain

        try:
            found = self.fs.exists(self.bucket)
        except Exception as err:  # each client words "unreachable" its own way
            raise UsageError(f"{flag} {self.url}: {explain(err)}") from err
        if not found:
            raise UsageError(f"{flag} {self.url}: the bucket {self.bucket} does not exist")

    def exists(self) -> bool:
        """An object at the path, or any object under it."""
        self.fs.invalidate_cache()
        return bool(self.fs.exists(self.path))

    def is_object(self) -> bool:
        self.fs.invalidate_cache()
        return bool(self.fs.isfile(self.path))

    def nbytes(self) -> int:
        """Bytes stored at the path or under it."""
        self.fs.invalidate_cache()
        return int(self.fs.du(self.path, total=True))

    def read_bytes(self) -> bytes:
        return bytes(self.fs.cat_file(self.path))

    def write_bytes(self, data: bytes) -> None:
        self.fs.pipe_file(self.path, data)

    def remove(self) -> None:
        """Delete the object, or every object under the prefix; nothing there is fine."""
        self.fs.invalidate_cache()
        if self.fs.isfile(self.path):
            self.fs.rm_file(self.path)
        elif self.fs.exists(self.path):
            self.fs.rm(self.path, recursive=True)
        self.fs.invalidate_cache()

    def zarr_store(self, *, read_only: bool, held: Location | None = None) -> Any:
        """A Zarr store at the prefix; with ``held``, its root metadata kept in that object."""
        from zarr.storage import FsspecStore

        fs = self.target.fsspec(asynchronous=True)
        self.opened.append(fs)
        if held is None:
            return FsspecStore(fs, path=self.path, read_only=read_only)
        return _held_root_store()(fs, path=self.path, read_only=read_only, held=held.path)


def _close(fs: Any) -> None:
    """Close an s3fs, gcsfs or adlfs filesystem's connections (in the loop that made them)."""
    from iotune.objectstore.clients import close_fsspec

    close_fsspec(fs)  # s3fs
    session = getattr(fs, "_session", None)  # gcsfs
    client = getattr(fs, "service_client", None)  # adlfs
    closing = session.close() if session is not None and not session.closed else None
    closing = client.close() if client is not None else closing
    if closing is None:
        return
    if client is not None:
        _detach_finalizers(fs)
    if fs.asynchronous:  # zarr's stores run in zarr's loop
        from zarr.core.sync import sync as zarr_sync

        zarr_sync(closing)
    else:
        from fsspec.asyn import sync

        sync(fs.loop, lambda: closing)


def _detach_finalizers(fs: Any) -> None:
    """Drop adlfs's own closers of ``fs`` (closed here) and of its loopless copies.

    adlfs registers ``weakref.finalize`` closers that run the instance's loop,
    which an asynchronous instance does not have (None): each would print a
    traceback when the filesystem is collected or at exit.  dask tokenises the
    Zarr arrays xarray writes by pickling them, which makes such copies of the
    store's filesystem; they never connected, so there is nothing to close.
    """
    import weakref

    registry = getattr(weakref.finalize, "_registry", {})
    for finalizer, info in list(registry.items()):
        owner = info.weakref()
        loopless = bool(info.args) and info.args[0] is None
        if owner is fs or (loopless and type(owner).__module__.startswith("adlfs")):
            finalizer.detach()


def _held_root_store() -> type:
    """The held-root store class, made on first use: it subclasses zarr's ``FsspecStore``."""
    from zarr.storage import FsspecStore

    class _HeldRootStore(FsspecStore):
        """A Zarr store whose root ``zarr.json`` lives in another object (``held``)."""

        def __init__(self, fs: Any, *, path: str, read_only: bool, held: str) -> None:
            super().__init__(fs, path=path, read_only=read_only)
            self.held = held

        def with_read_only(self, read_only: bool = False) -> Any:
            return type(self)(self.fs, path=self.path, read_only=read_only, held=self.held)

        async def get(self, key: str, prototype: Any, byte_range: Any = None) -> Any:
            if key != ROOT:
                return await super().get(key, prototype, byte_range)
            try:
                return prototype.buffer.from_bytes(await self.fs._cat_file(self.held))
            except FileNotFoundError:
                return None

        async def set(self, key: str, value: Any, byte_range: Any = None) -> None:
            if key != ROOT:
                return await super().set(key, value, byte_range)
            self._check_writable()
            await self.fs._pipe_file(self.held, value.to_bytes())
            return None

        async def exists(self, key: str) -> bool:
            if key != ROOT:
                return bool(await super().exists(key))
            return bool(await self.fs._exists(self.held))

    return _HeldRootStore


def open_store_source(url: str) -> Source:
    """Open a Zarr store or a netCDF/HDF5 object on a store, without decoding.

    A netCDF/HDF5 object is read by h5netcdf through an fsspec file (byte ranges).

    Raises
    ------
    UsageError
        The bucket or object is missing, or neither format can read it.
    """
    import xarray as xr

    where = Location.of(url, flag="source")
    if not where.exists():
        raise UsageError(f"source {where.url}: no such object or prefix")
    opened: Any = None
    try:
        if not where.is_object():
            store = where.zarr_store(read_only=True)
            ds = xr.open_zarr(store, decode_cf=False, chunks=None, consolidated=False)
            return StoreSource(Path(where.path), STORE, ds, url=where.url, where=where)
        opened = where.fs.open(where.path, "rb", block_size=4 * 2**20, cache_type="readahead")
        ds = xr.open_dataset(opened, engine="h5netcdf", decode_cf=False)
    except Exception as err:
        if opened is not None:
            opened.close()
        where.close()
        why = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UsageError(
            f"source {where.url}: not a readable netCDF, HDF5 or Zarr source ({why})"
        ) from err
    _netcdf4_names(ds)
    unlimited = tuple(ds.encoding.get("unlimited_dims") or ())
    return StoreSource(
        Path(where.path), FILE, ds, unlimited, url=where.url, where=where, file=opened
    )


def _netcdf4_names(ds: Any) -> None:
    """h5netcdf's compression keywords as netCDF4's, which the targets copy."""
    for var in ds.variables.values():
        enc = var.encoding
        if enc.get("compression") == "gzip":
            enc["zlib"] = True
            enc["complevel"] = enc.get("compression_opts") or 4


@dataclass
class StoreSource(Source):
    """A source on a store; a netCDF/HDF5 object's fsspec file is closed with the Dataset."""

    where: Any = None  # its Location
    file: Any = None

    def close(self) -> None:
        self.ds.close()
        if self.file is not None:
            self.file.close()
        if self.where is not None:
            self.where.close()

    def nbytes(self) -> int:
        return int(self.where.nbytes())


class StoreJournal(RegionJournal):
    """:class:`RegionJournal` kept in one object, rewritten whole after each region."""

    def __init__(self, where: Location, *, job: dict[str, Any], resume: bool) -> None:
        self.where = where
        self.path = Path(where.path)
        self.done: set[int] = set()
        self._text = ""
        if resume and where.exists():
            self._text = where.read_bytes().decode()
            self._load(job)
        else:
            self._append({"journal": JOURNAL_VERSION, "job": job})

    def _load(self, job: dict[str, Any]) -> None:
        lines = self._text.split("\n")
        if json.loads(lines[0]).get("job") != job:
            raise UsageError(
                f"--resume: {self.where.url} belongs to another conversion (its source, "
                "configuration or variables differ); use --overwrite to start again"
            )
        for line in lines[1:]:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("written") is not None:
                self.done.add(int(entry["written"]))

    def _append(self, entry: dict[str, Any]) -> None:
        self._text += json.dumps(entry) + "\n"
        self.where.write_bytes(self._text.encode())  # a PUT is durable once it returns

    def entries(self) -> list[dict[str, Any]]:
        lines = self.where.read_bytes().decode().splitlines()[1:]
        return [json.loads(line) for line in lines if line.strip()]
