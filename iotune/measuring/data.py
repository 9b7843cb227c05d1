"""The data trials write, generated slab by slab along the first dimension.

The default ``smooth`` field is built to compress like real geoscience
fields: a sum of travelling waves with a red (power-law) spectrum on top of a
large-scale gradient, plus weak small-scale noise, stored at a realistic
precision.  Every time step is computed on its own from the seed, so any slab
is identical however the array is cut, and memory grows with the slab, not
the dataset.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from iotune.core.units import parse_chunk_label
from iotune.model.spec import Workload

# 32 modes give visible structure; the spectrum slope makes large scales dominate.
_MODES = 32
_SLOPE = 1.7
# Integer fields are scaled so neighbouring values differ by about this many counts
# (a temperature packed at 0.01 K on a fine grid), with noise of a count or two.
# That precision, not the amplitude, decides how well codecs compress.
_STEP_COUNTS = 12.0
_NOISE_COUNTS = 1.5


CACHE_LIMIT = 256 * 2**20
_CACHE: dict[tuple[Workload, int, int], np.ndarray] = {}


class Field:
    """Deterministic values of a workload, produced one slab at a time."""

    def __init__(self, workload: Workload) -> None:
        self.workload = workload
        self._dtype = np.dtype(workload.dtype)
        if workload.field == "smooth":
            self._init_modes()
        if workload.field == "file" and not (workload.path and workload.variable):
            raise ValueError("field 'file' needs a path and a variable")

    def _init_modes(self) -> None:
        rng = np.random.default_rng([self.workload.seed, 0x5EED])
        ny, nx = _plane_shape(self.workload)
        k = rng.integers(1, 12, size=(_MODES, 2)) * rng.choice([-1, 1], size=(_MODES, 2))
        amp = np.hypot(k[:, 0], k[:, 1]) ** -_SLOPE
        amp /= np.sqrt((amp**2).sum() / 2)
        phase = rng.uniform(0, 2 * np.pi, size=(_MODES, 2))
        self._omega = rng.uniform(0.01, 0.08, size=_MODES) * rng.choice([-1, 1], size=_MODES)
        ay = 2 * np.pi * np.outer(np.arange(ny) / ny, k[:, 0]) + phase[:, 1]  # (ny, K)
        ax = 2 * np.pi * np.outer(np.arange(nx) / nx, k[:, 1])  # (nx, K)
        self._cx = (np.cos(ax) * amp).astype(np.float32)
        self._sx = (np.sin(ax) * amp).astype(np.float32)
        self._ay = ay
        self._gradient = (-0.8 * np.cos(np.linspace(0, np.pi, ny))).astype(np.float32)[:, None]
        self._span = self._integer_span(self._plane(0))

    def _integer_span(self, plane: np.ndarray) -> float:
        # a 2-d workload's plane is one row (1-d): only the axes it has
        axes = [axis for axis in (-1, -2) if plane.ndim >= -axis and plane.shape[axis] > 1]
        steps = [np.diff(plane, axis=axis) for axis in axes]
        rms_step = np.sqrt(np.mean([np.mean(s**2) for s in steps]))
        info = np.iinfo(self._dtype) if self._dtype.kind in "iu" else np.iinfo(np.int16)
        headroom = (info.max - info.min) / 2 / (1.3 * np.abs(plane).max())
        return float(min(_STEP_COUNTS / max(rms_step, 1e-9), headroom))

    def _plane(self, t: int) -> np.ndarray:
        angle = self._ay - self._omega * t  # (ny, K)
        cy, sy = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
        plane = cy @ self._cx.T - sy @ self._sx.T + self._gradient  # about +-1.5
        return plane.reshape(self.workload.shape[1:])

    def slab(self, start: int, stop: int) -> np.ndarray:
        """Return values ``[start:stop]`` along the first dimension."""
        shape = (stop - start, *self.workload.shape[1:])
        kind = self.workload.field
        if kind == "zeros":
            return np.zeros(shape, self._dtype)
        if kind == "file":
            return _file_slab(self.workload, start, stop)
        step = self._random_step if kind == "random" else self._smooth_step
        out = np.empty(shape, self._dtype)  # filled in place: no list of planes, no stack copy
        for i, t in enumerate(range(start, stop)):
            out[i] = step(t)
        return out

    def cached_slab(self, start: int, stop: int) -> np.ndarray:
        """:meth:`slab`, remembered per process for small workloads.

        Repeats and trials of a sweep write the same data; generating it again
        costs iotune time that is not I/O.  Only workloads up to
        ``CACHE_LIMIT`` bytes are kept, so memory stays bounded.  The arrays
        are read-only.
        """
        if self.workload.nbytes > CACHE_LIMIT or self.workload.field == "file":
            return self.slab(start, stop)
        key = (self.workload, start, stop)
        if key not in _CACHE:
            while _CACHE and sum(a.nbytes for a in _CACHE.values()) > CACHE_LIMIT:
                _CACHE.pop(next(iter(_CACHE)))
            # page-aligned, so O_DIRECT writes take the slab as it is
            data = aligned_copy(self.slab(start, stop))
            data.flags.writeable = False
            _CACHE[key] = data
        return _CACHE[key]

    def slabs(self, length: int) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(start, slab)`` pairs of at most ``length`` along the first dimension."""
        total = self.workload.shape[0]
        for start in range(0, total, length):
            yield start, self.cached_slab(start, min(start + length, total))

    def _random_step(self, t: int) -> np.ndarray:
        rng = np.random.default_rng([self.workload.seed, t])
        shape = self.workload.shape[1:]
        if self._dtype.kind == "f":
            return rng.standard_normal(shape, dtype=np.float32).astype(self._dtype)
        info = np.iinfo(self._dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=self._dtype, endpoint=True)

    def _smooth_step(self, t: int) -> np.ndarray:
        plane = self._plane(t)
        noise = np.random.default_rng([self.workload.seed, t]).standard_normal(
            plane.shape, dtype=np.float32
        )
        if self._dtype.kind == "f":
            # physical units, e.g. a temperature in K: 280 +- 15 with 0.02 K noise
            return (280.0 + 15.0 * plane + 0.02 * noise).astype(self._dtype)
        counts = self._span * plane + _NOISE_COUNTS * noise
        info = np.iinfo(self._dtype)
        if info.min == 0:
            counts += info.max / 2
        return np.clip(np.rint(counts), info.min, info.max).astype(self._dtype)


PAGE = 4096


def aligned_empty(shape: tuple[int, ...], dtype: np.dtype | str, align: int = PAGE) -> np.ndarray:
    """An uninitialised array whose data starts on an ``align``-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + align, dtype=np.uint8)
    skip = -raw.ctypes.data % align
    return raw[skip : skip + nbytes].view(dtype).reshape(shape)


def aligned_copy(array: np.ndarray, align: int = PAGE) -> np.ndarray:
    """``array`` copied to memory starting on an ``align``-byte boundary."""
    out = aligned_empty(array.shape, array.dtype, align)
    out[...] = array
    return out


def source_files(path: str | Path) -> list[Path]:
    """The files of a ``field: file`` source: the path itself, or a glob's matches, sorted.

    A glob (``data/tas_*.nc``) is several files read as one dataset along their record
    dimension, as ``xarray.open_mfdataset`` combines them; a path that exists is one
    file or store even when its name has glob characters.
    """
    import glob

    text = str(path)
    if Path(text).exists() or not glob.has_magic(text):
        return [Path(text)]
    matched = sorted(glob.glob(text))  # noqa: PTH207 (a pattern with its directory)
    if not matched:
        raise FileNotFoundError(errno.ENOENT, "no file matches the glob", text)
    return [Path(m) for m in matched]


def open_source(path: str | Path, **options: Any) -> Any:
    """``xr.open_dataset`` of a file or store, or ``xr.open_mfdataset`` of a glob's files.

    The files of a glob are combined by their coordinates (``combine="by_coords"``),
    lazily (dask): a slab reads only its rows.
    """
    import xarray as xr

    files = source_files(path)
    if len(files) > 1:
        return xr.open_mfdataset(files, combine="by_coords", **options)
    is_store = files[0].is_dir()
    extra: dict[str, Any] = {"engine": "zarr", "consolidated": False} if is_store else {}
    return xr.open_dataset(files[0], chunks=options.pop("chunks", None), **options, **extra)


def _open(path: str | Path):
    # raw stored values: packed integers stay integers, as the user's archive holds them
    return open_source(path, mask_and_scale=False, decode_times=False)


def _open_checked(path: str | Path):
    """:func:`_open`, with xarray's long engine and store messages said in a few words."""
    files = source_files(path)  # a glob that matches nothing: FileNotFoundError
    if not files[0].exists():  # before xarray, whose message for a missing store is a path
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    try:
        return _open(path)
    except (ValueError, OSError) as err:
        if Path(path).is_dir() and isinstance(err, ValueError):  # zarr's not-found is both
            raise ValueError("a directory that is not a Zarr store") from err
        if isinstance(err, ValueError) and "did not find a match" in str(err):
            raise ValueError("not a netCDF, HDF5 or Zarr file that xarray can open") from err
        raise


def describe_file(path: str | Path, variable: str) -> dict[str, Any]:
    """Shape (by dimension) and a supported dtype of ``variable`` in a file or store.

    Raises
    ------
    KeyError
        The variable is not there; the message lists the ones that are.
    OSError, ValueError
        The file cannot be opened by xarray (the message says why in words).
    """
    with _open_checked(path) as ds:
        if variable not in ds.variables:
            raise KeyError(f"no variable {variable!r}; it has {', '.join(map(str, ds.variables))}")
        var = ds[variable]
        dtype = str(var.dtype)
        if dtype not in ("int16", "int32", "uint16", "float32", "float64"):
            dtype = "float32" if var.dtype.kind == "f" else "int32"
        return {"shape": dict(var.sizes), "dtype": dtype}


def _file_slab(workload: Workload, start: int, stop: int) -> np.ndarray:
    """Steps ``start:stop`` of the user's variable, cropped or tiled to the workload shape."""
    assert workload.path is not None  # field: file has a path (the spec parser checks)
    with _open(workload.path) as ds:
        var = ds[workload.variable]
        lead = var.shape[0]
        index: list[Any] = [np.arange(start, stop) % lead]
        for n, m in zip(workload.shape[1:], var.shape[1:], strict=True):
            index.append(slice(0, min(n, m)))
        values = var.variable[tuple(index)].values
    for axis, (n, m) in enumerate(zip(workload.shape[1:], var.shape[1:], strict=True), start=1):
        if n > m:  # tile: repeat the source along this dimension
            values = np.take(values, np.arange(n) % m, axis=axis)
    target = np.dtype(workload.dtype)
    if target.kind in "iu" and values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError(
            f"{workload.variable!r} holds NaN, which {workload.dtype} cannot store; "
            "use dtype float32 or float64"
        )
    if target.kind in "iu" and values.size:
        info, low, high = np.iinfo(target), values.min(), values.max()
        if low < info.min or high > info.max:
            raise ValueError(
                f"{workload.variable!r} spans {low}..{high}, outside {workload.dtype} "
                f"({info.min}..{info.max}); choose a wider dtype"
            )
    return values.astype(target, copy=False)


def _plane_shape(workload: Workload) -> tuple[int, int]:
    """Collapse the non-leading dimensions to (rows, columns) for the mode sums."""
    rest = workload.shape[1:]
    rows = int(np.prod(rest[:-1])) if len(rest) > 1 else 1
    return rows, rest[-1]


#: bytes of one slab the runner generates and hands a writer, unless the backend asks less
SLAB_BUDGET = 32 * 2**20


def slab_length(workload: Workload, *, align: int | None = None, budget: int = SLAB_BUDGET) -> int:
    """Slab length along the first dimension that keeps a slab within ``budget`` bytes.

    With ``align`` (the chunk extent along the first dimension) the slab is a
    multiple of it when one chunk row fits, so writes fill whole chunks.
    """
    plane = workload.nbytes // workload.shape[0]
    fit = max(1, budget // plane)
    if align and align <= fit:
        fit = (fit // align) * align
    return min(fit, workload.shape[0])


def align_of(params: Mapping[str, Any]) -> int | None:
    """Extent along the first dimension that slabs should be multiples of.

    A shard is written whole, so shards win over chunks: a slab thinner than a
    shard would make zarr rewrite the shard once per slab.
    """
    for key in ("shards", "chunks"):
        value = params.get(key)
        layout = parse_chunk_label(value) if value not in (None, "none") else None
        if isinstance(layout, tuple):
            return layout[0]
    return None


def write_slab_length(
    workload: Workload, params: Mapping[str, Any], *, budget: int = SLAB_BUDGET
) -> int:
    """Slab length of a trial's write: :func:`slab_length` aligned to its chunks or shards."""
    return slab_length(workload, align=align_of(params), budget=budget)
