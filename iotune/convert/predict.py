"""``iotune apply --dry-run``: the size, time, memory and requests of a conversion, predicted.

Nothing is created: the prediction is made from a prepared :class:`Job` (every
pre-flight check passed), the sweep's measurements of the chosen configuration
(:func:`iotune.convert.probe.sweep_measured`) and a short cold read of the source
(:func:`iotune.convert.probe.probe_read`).

- **Size**: the raw bytes of the converted variables divided by the sweep's
  compression ratio for the configuration, plus the other variables' current size.
- **Time**: the conversion reads a region, then writes it, one after the other
  (:func:`iotune.convert.convert.convert`), so the times add up: read time (the
  bytes written by region at the probe's cold read rate) + write time (the raw
  bytes at the sweep's write rate) + verification (the checked regions read again at
  the probe's rate, decoded and compared at :func:`iotune.convert.probe.verify_rate`'s).
  At 8 GiB (``benchmarks/apply_predict.py``) the time came within +15 % and +19 % of
  the conversion's wall time, the size within +0.9 %.  Measured
  (``benchmarks/apply_time_model.py``, a 64 MiB float32 file with map chunks, four
  target layouts, three runs each): read + write came within -41 % to +37 % of the
  conversion's seconds (median error 11 % and 14 % in two sessions of 12 runs),
  max(read, write) fell short every time (-2 % to -53 %, median 18 % and 34 %).
- **Peak memory**: :func:`peak_bytes`, from the region plan.
- **Requests** (:mod:`iotune.convert.requests`): PUTs of chunks or shards (parts of
  one object for netCDF), GETs of the source's chunks, and their cost on an object store.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from iotune.convert import requests
from iotune.convert.probe import Measured, Probe, probe_read, sweep_measured
from iotune.convert.regions import COPIES
from iotune.convert.source import STORE, Source
from iotune.core.units import format_duration, format_rate, format_size

NOT_MEASURED = "no sweep measured this configuration"
#: how the time is predicted (see the module's docstring for the measurement behind it)
TIME_MODEL = "sum: read + write + verify (the conversion reads, then writes, each region)"
MiB = 2**20


@dataclass
class Prediction:
    """What ``--dry-run`` predicts; ``to_dict`` is its JSON form, :meth:`text` its report."""

    source: str
    target: str
    settings: str
    variables: list[str]
    regions: int
    raw_bytes: int
    other_bytes: int
    size_bytes: int | None
    size_basis: str
    seconds: float | None
    time_basis: str
    read_seconds: float | None
    write_seconds: float | None
    verify_seconds: float | None
    probe: dict[str, Any]
    write_MiBps: float | None
    peak_bytes: int
    peak_basis: str
    object_store: bool
    requests: dict[str, int]
    cost: float | None = None
    prices: str = ""
    notes: list[str] = field(default_factory=list)
    #: the knobs a reader sets, not the file, and the lines to set them
    reading: list[str] = field(default_factory=list)
    time_model: str = TIME_MODEL
    #: the objective the settings were recommended for (:class:`ApplyReport`'s)
    objective: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        lines = [f"dry run: would apply {self.settings} (nothing created)"]
        lines.append(f"  {self.source} -> {self.target}")
        if self.objective:
            lines.append(f"  objective: {self.objective}")
        plural = "" if self.regions == 1 else "s"
        lines.append(f"  variables {', '.join(self.variables)}; {self.regions} region{plural}")
        if self.size_bytes is None:
            lines.append(f"  size: {NOT_MEASURED}")
        else:
            lines.append(
                f"  size: about {format_size(self.size_bytes, exact=False)} ({self.size_basis})"
            )
        if self.seconds is None:
            lines.append(f"  time: {NOT_MEASURED} (source read at {_rate(self.probe)})")
        else:
            lines.append(
                f"  time: about {format_duration(self.seconds)} = read "
                f"{format_duration(self.read_seconds or 0.0)} + write "
                f"{format_duration(self.write_seconds or 0.0)} + verify "
                f"{format_duration(self.verify_seconds or 0.0)} "
                f"({self.time_basis})"
            )
        lines.append(f"  peak memory: about {format_size(self.peak_bytes, exact=False)}")
        if self.object_store:
            puts, gets = self.requests.get("PUT", 0), self.requests.get("GET", 0)
            priced = f", about {self.cost:.4g} ({self.prices})" if self.cost is not None else ""
            lines.append(f"  requests: {puts} PUT, {gets} GET{priced}")
        lines += [f"  {line}" for line in self.reading]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def _rate(probe: dict[str, Any]) -> str:
    rate = probe.get("MiBps")
    return f"{format_rate(rate)} cold" if rate else "an unmeasured rate"


def peak_bytes(job: Any) -> int:
    """The memory a conversion holds at its peak, from its region plan.

    The largest region held :data:`COPIES` times (the block read and the block
    written; verification holds a source and a target block), or a variable copied
    whole, held as many times, whichever is larger.  The interpreter and the
    libraries come on top of it (not included).
    """
    by_region = COPIES * max((job.bytes_of(r) for r in job.regions), default=0)
    whole = max((COPIES * job.source.ds[n].nbytes for n in job.whole), default=0)
    return int(max(by_region, whole))


def predict(
    job: Any,
    results: Any,
    *,
    source_text: str,
    target_text: str,
    verify_mode: str = "sample",
) -> Prediction:
    """Predict a prepared conversion (:func:`iotune.convert.convert.prepare`); write nothing.

    Parameters
    ----------
    job
        The :class:`iotune.convert.convert.Job`.
    results
        The sweep's results Dataset, or None (``--settings``: no measured ratio or rate).
    source_text, target_text
        The source and target as the user named them (an object-store URL or a path).
    verify_mode
        The verification the conversion would run (its reads are part of the time).
    """
    measured = sweep_measured(results, job.layout)
    ds = job.source.ds
    raw = sum(int(ds[n].nbytes) for n in job.converted)
    other = sum(stored_bytes(job.source, str(n)) for n in ds.variables if n not in job.converted)
    size, size_basis = _size(job, measured, raw, other)
    probe = probe_read(
        job.source,
        job.regions,
        sorted(job.by_region),
        region_dim=job.region_dim,
        codec=job.layout.codec,
    )
    times = _times(job, measured, probe, raw, verify_mode)
    counts = requests.count_requests(job, target_bytes=size, verify_mode=verify_mode)
    store = requests.scheme(target_text) or requests.scheme(source_text)
    sweep_prices = _sweep_prices(results)
    table, prices = requests.prices_for(store, sweep_prices) if store else ({}, "")
    notes = []
    if probe.cache != "cold":
        notes.append(f"the read probe began {probe.cache} ({probe.resident_fraction:.0%} resident)")
    if measured.points and results is not None and _synthetic(results):
        notes.append(
            "the ratio was measured on the sweep's generated data; the source's own values "
            "may compress differently (sweep the file itself: workload field: file)"
        )
    return Prediction(
        source=source_text,
        target=target_text,
        settings=job.layout.text(),
        variables=list(job.converted),
        regions=len(job.regions),
        raw_bytes=raw,
        other_bytes=other,
        size_bytes=size,
        size_basis=size_basis,
        seconds=times[0],
        time_basis=times[1],
        read_seconds=times[2],
        write_seconds=times[3],
        verify_seconds=times[4],
        probe=probe.to_dict(),
        write_MiBps=measured.write_MiBps,
        peak_bytes=peak_bytes(job),
        peak_basis=f"{COPIES} copies of the largest region (peak_bytes)",
        object_store=bool(store),
        requests=counts,
        cost=requests.cost(counts, table, bytes_out=0) if table else None,
        prices=prices,
        notes=notes,
        reading=job.layout.reading_lines(),
    )


def _size(job: Any, measured: Measured, raw: int, other: int) -> tuple[int | None, str]:
    if measured.ratio is not None:
        basis = (
            f"the sweep's ratio {measured.ratio:.3g} of {measured.label} on "
            f"{format_size(raw, exact=False)} raw, + {format_size(other, exact=False)} of "
            "other variables"
        )
        return round(raw / measured.ratio) + other, basis
    if job.layout.codec.name == "none":
        return raw + other, "uncompressed: the raw bytes, + the other variables"
    return None, NOT_MEASURED


def _times(
    job: Any, measured: Measured, probe: Probe, raw: int, verify_mode: str
) -> tuple[float | None, str, float | None, float | None, float | None]:
    read_rate, write_rate = probe.MiBps, measured.write_MiBps
    if read_rate is None or write_rate is None:
        return None, NOT_MEASURED, None, None, None
    read_s = job.total_bytes / MiB / read_rate
    write_s = raw / MiB / write_rate
    checked = sum(job.bytes_of(r) for r in requests.checked_regions(job.regions, verify_mode))
    # verification reads each checked region from the source again and from the target,
    # decodes the target's and compares: the target's bytes, just written, come from the
    # page cache, its decoding and the comparison take the time (the probe's codec rate)
    verify_rate = probe.verify_MiBps or read_rate
    verify_s = checked / MiB / read_rate + checked / MiB / verify_rate
    basis = (
        f"read at {format_rate(read_rate)} (probe, {probe.cache}), write at "
        f"{format_rate(write_rate)} (the sweep's), verify at {format_rate(verify_rate)} "
        "(decode and compare, probed)"
    )
    return read_s + write_s + verify_s, basis, read_s, write_s, verify_s


def stored_bytes(source: Source, name: str) -> int:
    """A variable's bytes in the source as stored (compressed); its raw bytes if unknown."""
    var = source.ds[name]
    if source.kind == STORE:
        folder = source.path / name
        return (
            sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
            if folder.is_dir()
            else 0
        )
    try:
        import h5py

        with h5py.File(source.path, "r") as f:
            return int(f[name].id.get_storage_size())
    except (OSError, KeyError, ImportError):  # netCDF-3, or a name HDF5 spells otherwise
        return int(var.nbytes)


def _sweep_prices(results: Any) -> dict[str, float]:
    import json

    text = results.attrs.get("storage_prices") if results is not None else None
    return dict(json.loads(text)) if text else {}


def _synthetic(results: Any) -> bool:
    return results.iotune.workload.get("field", "smooth") != "file"
