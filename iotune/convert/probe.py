"""What a prediction is made of: the sweep's measurements of the configuration, a read probe.

The compression ratio and the write rate are the sweep's, measured on its workload
with the chosen configuration (median over the repeats and over the points that
differ only in read-side knobs).  The read rate is the source's own: a few regions
read cold, as the conversion will read them.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.convert.layout import Layout, layout_of
from iotune.convert.regions import sample
from iotune.convert.source import Source
from iotune.core.errors import UsageError
from iotune.measuring import measure
from iotune.model import codecs
from iotune.model.codecs import Codec
from iotune.results.partial import PARTIAL

if TYPE_CHECKING:
    import xarray as xr

    from iotune.convert.regions import Region

#: bytes the read probe reads at most, and the regions it samples
PROBE_BYTES = 64 * 2**20
PROBE_REGIONS = 3
#: residency above which the probe's read is not called cold (the sweeps' default)
MAX_COLD_RESIDENCY = 0.05


@dataclass(frozen=True)
class Measured:
    """The sweep's ratio (raw / stored bytes) and write rate (raw MiB/s) of a configuration."""

    ratio: float | None
    write_MiBps: float | None
    points: int
    label: str
    #: the settings of the first matching point (its read-side knobs: chunk cache...)
    settings: dict[str, Any] = field(default_factory=dict)


def sweep_measured(ds: xr.Dataset | None, layout: Layout) -> Measured:
    """The sweep's measurements of ``layout``; no points when the sweep did not measure it.

    A point matches when its backend, chunks, codec (level, shuffle) and shards are
    the layout's; several points may (chunk caches, dask chunks), their medians are
    combined by a median.
    """
    if ds is None:
        return Measured(None, None, 0, "")
    dims = tuple(ds.iotune.workload.get("shape") or ())
    ratios, writes, labels = [], [], []
    first: dict[str, Any] = {}
    for row in ds.iotune.points():
        if row.get("status") not in ("ok", PARTIAL):  # partial: a stopped run's, measured
            continue
        settings = {**ds.iotune.fixed, **{k: row[k] for k in ds.iotune.swept}}
        if "backend" not in settings and len(ds.iotune.backends) == 1:
            settings["backend"] = ds.iotune.backends[0]
        try:
            point = layout_of(settings, dims=dims, backend=settings.get("backend"))
        except UsageError:
            continue  # a backend or codec apply cannot write: not the chosen configuration
        if _same(point, layout):
            ratios.append(row.get("ratio"))
            writes.append(row.get("write"))
            labels.append(" ".join(f"{k}={row[k]}" for k in ds.iotune.swept))
            first = first or settings
    label = "; ".join(labels[:2])
    return Measured(_median(ratios), _median(writes), len(labels), label, first)


def _same(a: Layout, b: Layout) -> bool:
    return (a.backend, a.chunks, a.codec, a.shards) == (b.backend, b.chunks, b.codec, b.shards)


def _median(values: list[Any]) -> float | None:
    found = [float(v) for v in values if v is not None and float(v) == float(v) and float(v) > 0]
    return statistics.median(found) if found else None


@dataclass(frozen=True)
class Probe:
    """The source read cold: bytes, seconds, and the cache state the read began in."""

    nbytes: int
    seconds: float
    cache: str
    resident_fraction: float
    #: raw MiB/s at which a block of the source, stored with the target's codec, is
    #: decoded and compared with the source (:func:`verify_rate`); None without a codec
    verify_MiBps: float | None = None

    @property
    def MiBps(self) -> float | None:
        return self.nbytes / 2**20 / self.seconds if self.seconds > 0 and self.nbytes else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "bytes": self.nbytes,
            "seconds": round(self.seconds, 6),
            "MiBps": self.MiBps,
            "cache": self.cache,
            "resident_fraction": self.resident_fraction,
            "verify_MiBps": self.verify_MiBps,
        }


def verify_rate(block: np.ndarray, codec: Codec) -> float | None:
    """Raw MiB/s of what verification does to a target block besides reading its bytes.

    The block is encoded with ``codec`` (numcodecs, as the sweep's memory backend
    does), then timed: decoded and compared with the original.  Measured on 512 MiB
    converted to 128x16x16 zlib 1, verification spent 3.0 s decoding the target and
    2.6 s comparing against 0.4 s reading the source again: reads alone predict a
    third of it.
    """
    if not block.size:
        return None
    pipeline = codecs.numcodecs_pipeline(codec, itemsize=block.dtype.itemsize)
    encoded: Any = np.ascontiguousarray(block)
    for step in pipeline:
        encoded = step.encode(encoded)
    began = time.perf_counter()
    decoded: Any = encoded
    for step in reversed(pipeline):
        decoded = step.decode(decoded)
    same = np.array_equal(np.frombuffer(decoded, dtype=block.dtype).reshape(block.shape), block)
    seconds = time.perf_counter() - began
    if not same:  # a lossy or broken pipeline: the rate would not be verification's
        return None
    return block.nbytes / 2**20 / seconds if seconds > 0 else None


def probe_read(
    source: Source,
    regions: list[Region],
    names: list[str],
    *,
    region_dim: str,
    budget: int = PROBE_BYTES,
    codec: Codec | None = None,
) -> Probe:
    """Read a few regions of the variables written by region cold, as the conversion does.

    The first, middle and last regions (:func:`iotune.convert.regions.sample`), each cut
    to a share of ``budget``; the source's files are evicted from the page cache first
    and their residency checked (a Zarr store: every file of it).  With ``codec``, the
    largest block read also gives :func:`verify_rate`.
    """
    chosen = sample(regions, PROBE_REGIONS)
    ds = source.ds
    row = sum(ds[n].dtype.itemsize * _rest(ds[n].shape) for n in names) or 1
    rows = max(1, budget // max(len(chosen), 1) // row)
    files = [source.path] if source.path.is_file() else sorted(source.path.rglob("*"))
    state, fraction = measure.prepare_cache(
        [f for f in files if f.is_file()], mode="cold", max_residency=MAX_COLD_RESIDENCY
    )
    clock, nbytes, kept = measure.Stopwatch(), 0, None
    for region in chosen:
        block = {region_dim: slice(region.start, min(region.stop, region.start + rows))}
        for name in names:
            with clock:
                data = ds[name].isel(block).values
            nbytes += data.nbytes
            kept = data if kept is None or data.nbytes > kept.nbytes else kept
            del data
    rate = verify_rate(kept, codec) if codec is not None and kept is not None else None
    return Probe(nbytes, clock.wall, state, round(fraction, 4), rate)


def _rest(shape: tuple[int, ...]) -> int:
    n = 1
    for size in shape[1:]:
        n *= size
    return n
