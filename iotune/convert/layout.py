"""The storage configuration a conversion writes: format, chunks and codec.

Made from a recommendation's settings (a results file's ``effective`` mapping) or
from the text of ``--settings`` (``"chunks=1x256x256 codec=zstd level=3"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iotune.backends.hdf5_family import CACHE_KNOBS, FILE_KNOBS, resolve_file
from iotune.convert.lossy import parse_quantize
from iotune.core.errors import NotApplicable, UsageError
from iotune.core.units import chunk_label, parse_chunk_label
from iotune.model import parameters
from iotune.model.codecs import Codec, h5py_encoding, netcdf4_encoding, resolve
from iotune.model.quantize import Quantize

#: the target formats a conversion writes, by the backend a sweep measured (h5py and
#: h5netcdf: the same netCDF-4-readable HDF5 file, with the file-level knobs)
FORMATS = ("netcdf4", "zarr", "h5py", "h5netcdf")
HDF5 = ("h5py", "h5netcdf")
#: the HDF5 file-level and chunk cache knobs a target carries, as the h5py backend names them
HDF5_KNOBS = ("chunk_cache", *FILE_KNOBS, *CACHE_KNOBS)
#: --settings keys
SETTING_KEYS = (
    "backend",
    "chunks",
    "codec",
    "level",
    "shuffle",
    "quantize",
    "shards",
    *HDF5_KNOBS,
)


@dataclass(frozen=True)
class Layout:
    """Format, chunks (``contiguous``, ``auto`` or one length per dimension) and codec.

    ``dims`` names the dimensions ``chunks`` is given in (the workload's), empty when
    unknown (then chunks apply to the converted variables' dimensions in order).
    """

    backend: str
    chunks: str | tuple[int, ...]
    codec: Codec
    dims: tuple[str, ...] = ()
    #: a lossy quantisation (``bitround:10``, ``digits:3``; ``off``): see convert/lossy.py
    quantize: str = "off"
    #: Zarr shards (a multiple of ``chunks`` along every dimension), None for none
    shards: tuple[int, ...] | None = None
    #: HDF5 file-level and chunk cache knobs (:data:`HDF5_KNOBS`), as (name, value) pairs
    hdf5: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "quantize", parse_quantize(self.quantize).label)
        if self.backend not in FORMATS:
            allowed = ", ".join(FORMATS)
            raise UsageError(f"backend: {self.backend!r} cannot be written; allowed: {allowed}")
        if isinstance(self.chunks, str) and self.chunks not in ("contiguous", "auto"):
            raise UsageError(f"chunks: {self.chunks!r}; allowed: contiguous, auto or 1x256x256")
        if isinstance(self.chunks, tuple):
            if any(c < 1 for c in self.chunks):
                raise UsageError(f"chunks: {chunk_label(self.chunks)} has a length below 1")
            if self.dims and len(self.dims) != len(self.chunks):
                raise UsageError(
                    f"chunks: {chunk_label(self.chunks)} has {len(self.chunks)} lengths "
                    f"for the {len(self.dims)} dimensions {', '.join(self.dims)}"
                )
        if self.backend == "zarr" and self.chunks == "contiguous":
            raise UsageError("chunks: contiguous does not apply to zarr (allowed: auto or AxBxC)")
        if self.shards is not None:
            self._check_shards(self.shards)
        if self.backend == "netcdf4":
            try:
                netcdf4_encoding(self.codec)
            except NotApplicable as err:
                raise UsageError(f"codec: {err}") from err
        if self.hdf5 or self.backend in HDF5:
            self._check_hdf5()

    def _check_hdf5(self) -> None:
        """The h5py backend's own rules for its file-level knobs (resolve_file)."""
        if self.hdf5 and self.backend not in HDF5:
            raise UsageError(
                f"{self.hdf5[0][0]}: an HDF5 file-level knob; it applies to backend "
                f"{' or '.join(HDF5)}, not {self.backend}"
            )
        if self.chunks == "contiguous" and self.codec.name != "none":
            raise UsageError("chunks: contiguous storage cannot be compressed in HDF5")
        try:
            h5py_encoding(self.codec)
            resolve_file(dict(self.hdf5), chunk_label(self.chunks), HDF5_KNOBS)
        except NotApplicable as err:
            raise UsageError(f"backend {self.backend}: {err}") from err

    def _check_shards(self, shards: tuple[int, ...]) -> None:
        if self.backend != "zarr":
            raise UsageError(f"shards: {chunk_label(shards)} apply to zarr only")
        if not isinstance(self.chunks, tuple) or len(shards) != len(self.chunks):
            raise UsageError(
                f"shards: {chunk_label(shards)} need chunks of as many lengths, "
                f"not {chunk_label(self.chunks)}"
            )
        if any(s % c for s, c in zip(shards, self.chunks, strict=True)):
            raise UsageError(
                f"shards: {chunk_label(shards)} is not a multiple of the chunks "
                f"{chunk_label(self.chunks)} along every dimension"
            )

    @property
    def lossy(self) -> Quantize:
        """The quantisation, ``Quantize()`` (off) for lossless settings."""
        return parse_quantize(self.quantize)

    def shards_for(self, dims: Sequence[str], shape: Sequence[int]) -> tuple[int, ...] | None:
        """The shard shape of a variable: no longer than the whole chunks that cover it."""
        if self.shards is None or isinstance(self.chunks, str):
            return None
        chunks = self.chunks_for(dims, shape)
        assert isinstance(chunks, tuple)  # explicit chunks: checked at construction
        return tuple(
            min(s, -(-n // c) * c) for c, s, n in zip(chunks, self.shards, shape, strict=True)
        )

    def chunks_for(self, dims: Sequence[str], shape: Sequence[int]) -> tuple[int, ...] | str:
        """The chunk lengths of a variable of ``dims`` and ``shape``, clipped to its shape."""
        if isinstance(self.chunks, str):
            return self.chunks
        if self.dims and tuple(dims) == self.dims:
            lengths = self.chunks
        elif len(dims) == len(self.chunks):
            lengths = self.chunks  # positional: the variable's names differ from the workload's
        else:
            raise UsageError(
                f"chunks: {chunk_label(self.chunks)} does not fit a variable of dimensions "
                f"({', '.join(dims)})"
            )
        return tuple(max(1, min(c, n)) for c, n in zip(lengths, shape, strict=True))

    def text(self) -> str:
        """The configuration as ``--settings`` takes it."""
        parts = [f"backend={self.backend}", f"chunks={chunk_label(self.chunks)}"]
        parts.append(f"codec={self.codec.name}")
        if self.codec.level is not None:
            parts.append(f"level={self.codec.level}")
        if self.codec.shuffle != "none":
            parts.append(f"shuffle={self.codec.shuffle}")
        if self.shards is not None:
            parts.append(f"shards={chunk_label(self.shards)}")
        if self.lossy.lossy:
            parts.append(f"quantize={self.quantize}")
        parts += [f"{k}={parameters.show(k, v)}" for k, v in self.hdf5]
        return " ".join(parts)


def parse_settings(text: str) -> dict[str, Any]:
    """``"chunks=1x256x256 codec=zstd level=3"`` as a settings mapping."""
    settings: dict[str, Any] = {}
    for item in text.replace(",", " ").split():
        key, sep, value = item.partition("=")
        if not sep or key not in SETTING_KEYS:
            allowed = ", ".join(SETTING_KEYS)
            raise UsageError(f"--settings: {item!r} is not KEY=VALUE with KEY one of {allowed}")
        if key in ("chunks", "shards"):
            try:
                settings[key] = parse_chunk_label(value)
            except ValueError as err:
                raise UsageError(f"--settings: {key}={value!r} is not AxBxC") from err
        elif key == "level":
            try:
                settings[key] = int(value)
            except ValueError as err:
                raise UsageError(f"--settings: level={value!r} is not an integer") from err
        else:
            settings[key] = value
    return settings


def layout_of(
    settings: Mapping[str, Any], *, dims: Sequence[str] = (), backend: str | None = None
) -> Layout:
    """The :class:`Layout` of a recommendation's (or ``--settings``') mapping.

    Raises
    ------
    UsageError
        A setting that cannot be written (quantisation, an unknown codec or level).
    """
    chunks = settings.get("chunks", "auto")
    if isinstance(chunks, str):
        chunks = parse_chunk_label(chunks)
    elif isinstance(chunks, Sequence):
        chunks = tuple(int(c) for c in chunks)
    try:
        codec, _ = resolve(
            settings.get("codec") or "none", settings.get("level"), settings.get("shuffle")
        )
    except (NotApplicable, ValueError, KeyError) as err:
        raise UsageError(f"codec: {err}") from err
    chosen = backend or settings.get("backend") or "netcdf4"
    quantize = str(settings.get("quantize") or "off")
    shards = settings.get("shards")
    if isinstance(shards, str):
        shards = None if shards == "none" else parse_chunk_label(shards)
    if isinstance(shards, str):
        raise UsageError(f"shards: {shards!r}; allowed: none or AxBxC")
    found = None if shards is None else tuple(int(n) for n in shards)
    # parsed as a spec parses them (sizes like 64KiB); a SpecError is a UsageError
    hdf5 = tuple(
        (k, parameters.get(k).parse(settings[k], k, None))  # type: ignore[arg-type]
        for k in HDF5_KNOBS
        if settings.get(k) is not None
    )
    return Layout(str(chosen), chunks, codec, tuple(dims), quantize, found, hdf5)


def check_dtype(layout: Layout, dtype: Any, name: str) -> None:
    """Refuse a configuration that does not apply to a variable's dtype."""
    import numpy as np

    kind = np.dtype(dtype).kind
    if kind not in "biuf":
        raise UsageError(f"{name}: dtype {np.dtype(dtype)} cannot be converted (allowed: numbers)")
    if layout.codec.info.family == "blosc" and np.dtype(dtype).itemsize > 255:
        raise UsageError(f"{name}: blosc does not apply to items of {np.dtype(dtype).itemsize} B")
