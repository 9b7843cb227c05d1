"""What a sweep will cost before it runs: seconds per trial, wall time per worker count, disk.

A trial's repeat writes the workload once and reads it once per pattern.  Its cost
is modelled from what the plan knows: the stored bytes each step moves (the
chunks each read touches, counted again where a chunk cache too small for the
read's chunks makes the library read them again), the codec's seconds per byte
and ratio on the workload's own data (:func:`~iotune.runner.expected.profile_codecs`),
and rates the scratch file system showed to a short probe
(:mod:`iotune.runner.forecast_probe`): bytes per second written with fsync and read
cold, seconds per chunk touched, and what a repeat costs besides its bytes
(measured on a tiny real trial).  The wall time of ``k`` workers lays the trials
out longest first, the storage-bound ones at most ``per_host`` at a time on the one
host a plan knows of.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iotune.model.records import Trial
from iotune.model.spec import ReadSpec, Sweep, Workload
from iotune.runner.expected import CodecCost, codec_key, expected_repeats

#: read patterns the model knows the selections of; the others (a user's code, the
#: loader's batches) are costed as one full read
SELECTED_PATTERNS = ("full", "spatial", "timeseries", "random")
#: chunks counted one by one for a read's distinct set; above, a bound stands in
MAX_COUNTED_CHUNKS = 200_000


@dataclass(frozen=True)
class Rates:
    """What the scratch file system and iotune's own steps cost, from the probe."""

    write_bytes_per_s: float
    read_bytes_per_s: float
    #: a repeat's fixed cost: creating, syncing, evicting, opening, closing, verifying
    repeat_s: float
    #: one chunk's library call besides its bytes (lookup, decompression set-up)
    chunk_s: float = 20e-6
    #: the run's own start and end: the trial worker, the codec probe, results.nc
    startup_s: float = 2.0


@dataclass(frozen=True)
class TrialCost:
    """One trial's predicted seconds (all its repeats) and the disk it holds at once."""

    trial: Trial
    seconds: float
    disk_bytes: int
    storage_bound: bool


@dataclass(frozen=True)
class Forecast:
    """A plan's predicted cost: per trial, and the whole run by worker count."""

    trials: tuple[TrialCost, ...]
    #: the noise probes' share: re-runs of a reference trial's repeat
    probes_s: float
    startup_s: float

    @property
    def serial_s(self) -> float:
        """Seconds with one worker."""
        return self.wall(1)

    @property
    def disk_bytes(self) -> int:
        """The most scratch space one trial holds at a time."""
        return max((t.disk_bytes for t in self.trials), default=0)

    def wall(self, workers: int, *, per_host: int = 1) -> float:
        """Predicted wall seconds of ``workers`` workers on one host (longest first)."""
        costs = sorted(self.trials, key=lambda t: -t.seconds)
        free = [0.0] * max(1, workers)
        storage = [0.0] * max(1, per_host)  # when each storage slot of the host frees
        probes = self.probes_s / max(1, len(costs))
        for cost in costs:
            start = heapq.heappop(free)
            if cost.storage_bound:
                start = max(start, heapq.heappop(storage))
                heapq.heappush(storage, start + cost.seconds + probes)
            heapq.heappush(free, start + cost.seconds + probes)
        return self.startup_s + max(free)

    def dominating(self, share: float) -> list[tuple[TrialCost, float]]:
        """Trials predicted to take more than ``share`` of the serial run, with their share."""
        total = sum(t.seconds for t in self.trials) + self.probes_s
        if total <= 0:
            return []
        found = [(t, t.seconds / total) for t in self.trials]
        return sorted(((t, s) for t, s in found if s > share), key=lambda ts: -ts[1])


def forecast(
    sweep: Sweep,
    trials: Sequence[Trial],
    codecs: Mapping[Any, CodecCost],
    rates: Rates,
) -> Forecast:
    """The :class:`Forecast` of ``trials`` of ``sweep`` under the probe's ``rates``."""
    costs = tuple(trial_cost(sweep, t, codecs, rates) for t in trials)
    runs = expected_repeats(sweep.measure)
    reference = costs[0].seconds / runs if costs else 0.0
    probes = sweep.measure.noise_probes * reference if len(costs) > 1 else 0.0
    return Forecast(costs, probes, rates.startup_s)


def trial_cost(
    sweep: Sweep, trial: Trial, codecs: Mapping[Any, CodecCost], rates: Rates
) -> TrialCost:
    """A trial's predicted seconds over its repeats, and its peak disk use."""
    from iotune.backends import get_backend

    backend = get_backend(trial.backend)
    workload = sweep.workload_at(trial.params.get("fidelity"))
    runs = expected_repeats(sweep.measure)
    own = backend.expected_seconds(trial.params, workload)
    if own is not None:  # the backend knows its cost better (memory, a plugin's waits)
        return TrialCost(trial, (own + rates.repeat_s) * runs, 0, backend.io_bound)
    key = codec_key(trial.params)
    codec = codecs.get(key, CodecCost(0.0, 0.0, 1.0)) if key else CodecCost(0.0, 0.0, 1.0)
    chunks = _chunks(backend, trial.params, workload)
    repeat = rates.repeat_s + write_seconds(workload, chunks, codec, rates)
    for pattern in sweep.read.patterns:
        repeat += read_seconds(pattern, workload, sweep.read, chunks, trial.params, codec, rates)
    stored = math.ceil(workload.nbytes * codec.stored_share) if backend.io_bound else 0
    return TrialCost(trial, repeat * runs, stored, backend.io_bound)


def write_seconds(
    workload: Workload, chunks: tuple[int, ...], codec: CodecCost, rates: Rates
) -> float:
    """One write of the workload: encoding, the stored bytes synced, a call per chunk."""
    nchunks = math.prod(-(-n // c) for n, c in zip(workload.shape, chunks, strict=True))
    stored = workload.nbytes * codec.stored_share
    return (
        workload.nbytes * codec.encode_s_per_byte
        + stored / rates.write_bytes_per_s
        + nchunks * rates.chunk_s
    )


def read_seconds(
    pattern: str,
    workload: Workload,
    read: ReadSpec,
    chunks: tuple[int, ...],
    params: Mapping[str, Any],
    codec: CodecCost,
    rates: Rates,
) -> float:
    """One cold read of ``pattern``: the chunks it touches, decoded, and a call each."""
    touched = chunk_reads(pattern, workload, read, chunks, params)
    raw = touched * math.prod(chunks) * workload.itemsize
    stored = raw * codec.stored_share
    return raw * codec.decode_s_per_byte + stored / rates.read_bytes_per_s + touched * rates.chunk_s


def chunk_reads(
    pattern: str,
    workload: Workload,
    read: ReadSpec,
    chunks: tuple[int, ...],
    params: Mapping[str, Any],
) -> int:
    """Chunks a cold read of ``pattern`` takes from storage.

    A chunk the read's selections share is read once when the chunk cache holds
    every chunk one selection touches (``chunk_cache``), else once per selection
    touching it.
    """
    if pattern not in SELECTED_PATTERNS:
        pattern = "full"
    every, distinct, per_selection = _touches(pattern, workload, read, chunks)
    if pattern == "full":
        return every  # slabs follow the chunks: each is read once
    cache = params.get("chunk_cache")
    chunk_bytes = math.prod(chunks) * workload.itemsize
    if cache is None or float(cache) < per_selection * chunk_bytes:
        return every
    return distinct


@functools.lru_cache(maxsize=256)
def _touches(
    pattern: str, workload: Workload, read: ReadSpec, chunks: tuple[int, ...]
) -> tuple[int, int, int]:
    """``(chunk touches, distinct chunks, most chunks one selection touches)`` of a read.

    Cached: a grid's trials share a few chunk shapes, and a plan may hold 10,000 trials.
    """
    from iotune.measuring.access import selections

    picked = selections(pattern, workload, read, align=chunks[0])
    spans = [_spans(sel, workload.shape, chunks) for sel in picked]
    counts = [math.prod(len(r) for r in span) for span in spans]
    every = sum(counts)
    return every, _distinct(spans, every), max(counts, default=0)


def _spans(selection: Iterable[Any], shape: Sequence[int], chunks: Sequence[int]) -> list[range]:
    """The chunk indices a selection covers along each dimension."""
    found = []
    picks = list(selection) + [slice(None)] * (len(shape) - len(tuple(selection)))
    for pick, n, c in zip(picks, shape, chunks, strict=True):
        if isinstance(pick, slice):
            start, stop, _ = pick.indices(n)
            found.append(range(start // c, (max(stop, start + 1) - 1) // c + 1))
        else:
            found.append(range(int(pick) // c, int(pick) // c + 1))
    return found


def _distinct(spans: list[list[range]], every: int) -> int:
    if every > MAX_COUNTED_CHUNKS:
        return every  # a bound: no cache holds that many chunks anyway
    import itertools

    return len({cell for span in spans for cell in itertools.product(*span)})


def _chunks(backend: Any, params: Mapping[str, Any], workload: Workload) -> tuple[int, ...]:
    """The trial's chunk shape; a contiguous or library-chosen layout as one slab per plane."""
    from iotune.core.units import parse_chunk_label

    label = params.get("chunks")
    found = parse_chunk_label(str(label)) if label is not None else "contiguous"
    if isinstance(found, tuple) and len(found) == len(workload.shape):
        return tuple(max(1, min(c, n)) for c, n in zip(found, workload.shape, strict=True))
    # contiguous (or the library's choice): reads go to the file's bytes directly, so
    # count a read in units of whole planes
    return (1, *workload.shape[1:])
