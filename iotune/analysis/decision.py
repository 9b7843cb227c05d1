"""Read the source as it is, through references, or rewritten: which pays, and when.

A sweep with ``compare`` (:mod:`iotune.specfile.compare`) measured up to three ways of
reading a ``field: file`` source, each the grid points of the backends that say they
measure it (``Backend.one_off``): ``in-place``, backends whose write makes nothing and
whose reads open the source's own files as the user does (xarray with an engine), which
costs nothing to make; ``references``, backends whose write makes references to the
source, whose one-off cost is their write (the references' build: seconds, and their
bytes); ``rewrite``, backends whose write copies the data, whose one-off cost is that
copy.  Per objective (each read
pattern, and one read of every pattern) each way's best point is its fastest to read,
and each way is weighed against every way cheaper to make by
:func:`iotune.results.breakeven.break_even`.  The way chosen is the one the long run
favours: the fastest to read among those that pay for themselves at all.  No backend is
named: each is asked what its write makes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.results.breakeven import METHOD, break_even
from iotune.results.labels import label

if TYPE_CHECKING:
    import xarray as xr

    from iotune.results.objective import Candidate

#: the objective of one read of every pattern (beside ``read:<pattern>``)
WORKLOAD = "workload"
#: the way that reads the source as it is: its backends make nothing, so it costs nothing
IN_PLACE = "in-place"


@dataclass
class Way:
    """One way's best point under an objective: what a read takes, what making it cost."""

    way: str
    label: str
    settings: dict[str, Any]
    #: median seconds a read (several patterns: their medians summed)
    read_s: float
    #: median one-off seconds (the write) and bytes made; 0 for the file as it is
    one_off_s: float
    one_off_bytes: float
    #: the repeats: the one-off's (None: nothing made) and, per pattern, the reads'
    made: list[float] | None = field(default=None, repr=False)
    reads: list[list[float]] = field(default_factory=list, repr=False)


@dataclass
class Outcome:
    """The ways under one objective, their break-evens and the way chosen."""

    #: each way's :class:`Way` as a dict, its repeats left out (the results hold them)
    ways: list[dict[str, Any]]
    #: ``{way, against, reads, low, high, never, high_never, extra_s, saved_s}`` for each
    #: way against each way cheaper to make (in JSON ``never`` says an infinite ``reads``,
    #: ``high_never`` an infinite ``high``; a NaN interval: one repeat)
    break_even: list[dict[str, Any]]
    choice: str
    #: reads from which the choice is the cheapest of all (0: from the first)
    from_reads: float


def decide(
    ds: xr.Dataset, candidates: Sequence[Candidate], *, objective: Mapping[str, float]
) -> dict[str, Any]:
    """The decision of a sweep with ``compare``; empty without it.

    Parameters
    ----------
    ds
        Results (their ``compare`` attribute names the ways).
    candidates
        The points within the objective's limits (recommend's ranking).
    objective
        Recommend's weights: one read pattern names the objective the choice is said
        for; anything else, one read of every pattern.

    Returns
    -------
    dict
        ``{compare, objective, choice, method, objectives: {metric: Outcome}, missing}``.
    """
    ways = tuple(str(ds.attrs.get("compare", "")).split())
    if not ways or "read_s" not in ds:
        return {}
    patterns = ds.iotune.patterns
    metrics = {f"read:{p}": (p,) for p in patterns}
    if len(patterns) > 1:
        metrics[WORKLOAD] = patterns
    outcomes, missing = {}, []
    for metric, wanted in metrics.items():
        found = [w for w in (_best(ds, way, candidates, wanted) for way in ways) if w]
        if metric == next(iter(metrics)):
            missing = [w for w in ways if w not in {f.way for f in found}]
        if found:
            outcomes[metric] = asdict(_outcome(found))
    named = next(iter(objective)) if len(objective) == 1 else WORKLOAD
    named = named if named in outcomes else next(iter(outcomes), "")
    return {
        "compare": list(ways),
        "objective": named,
        "choice": outcomes[named]["choice"] if named else "",
        "method": METHOD,
        "objectives": outcomes,
        "missing": missing,
    }


def _outcome(ways: list[Way]) -> Outcome:
    """Break-evens of every way against those cheaper to make; the long run's way."""
    ways = sorted(ways, key=lambda w: w.one_off_s)
    rows, choice, since = [], ways[0], 0.0
    for i, way in enumerate(ways):
        for cheaper in ways[:i]:
            found = break_even(way.made, cheaper.made, way.reads, cheaper.reads)
            rows.append({"way": way.way, "against": cheaper.way, **asdict(found)})
            rows[-1] |= {"never": found.never, "high_never": math.isinf(found.high)}
    for way in ways[1:]:  # the fastest to read of those that pay at all
        against = [r for r in rows if r["way"] == way.way]
        if way.read_s < choice.read_s and not any(r["never"] for r in against):
            choice, since = way, max(r["reads"] for r in against)
    shown = [{k: v for k, v in asdict(w).items() if k not in ("made", "reads")} for w in ways]
    return Outcome(shown, rows, choice.way, since)


def _best(
    ds: xr.Dataset, way: str, candidates: Sequence[Candidate], patterns: Sequence[str]
) -> Way | None:
    """The way's fastest point to read ``patterns`` (None: not measured)."""
    from iotune.backends import get_backend

    grid = ds.iotune.dense()  # a search's visited points as a grid
    only = ds.iotune.backends[0] if len(ds.iotune.backends) == 1 else ""
    found = []
    for cand in candidates:
        backend = str(cand.settings.get("backend", only))
        cls = get_backend(backend) if backend else None
        if cls is None or cls.one_off != way:
            continue
        # the backend's own knobs: another backend's swept chunks say nothing of a read here
        own = label({k: v for k, v in cand.coords.items() if k in ("backend", *cls.parameters)})
        point = grid.sel({k: v for k, v in cand.coords.items() if k in grid.dims})
        reads = [_values(point["read_s"].sel(pattern=p)) for p in patterns]
        if way == IN_PLACE:  # nothing made: no one-off, whatever the writer's no-op took
            # its few knobs all said (the engine, dask's chunks), swept or not
            knobs = {k: v for k, v in cand.settings.items() if k in cls.parameters}
            mine = label({"backend": backend, **{k: v for k, v in knobs.items() if v is not None}})
            shown = f"{mine} ({_source_layout(point)})"
            found.append(Way(way, shown, cand.settings, _sum(reads), 0.0, 0.0, None, reads))
            continue
        made = _values(point["write_s"]) if "write_s" in point else [math.nan]
        size = float(np.ravel(point["file_bytes"].values)[0])
        found.append(Way(way, own, cand.settings, _sum(reads), _med(made), size, made, reads))
    usable = [w for w in found if math.isfinite(w.read_s)]
    return min(usable, key=lambda w: w.read_s) if usable else None


def _source_layout(point: xr.Dataset) -> str:
    """The source's layout as the in-place trial read it back: ``chunks=1x64x128 zlib``."""
    import json

    text = str(np.ravel(point["file_properties"].values)[0]) if "file_properties" in point else ""
    stored = json.loads(text) if text else {}
    chunks = stored.get("source_chunks", "?")
    shown = "x".join(map(str, chunks)) if isinstance(chunks, list) else str(chunks)
    return f"the source: chunks={shown} {stored.get('source_compression', '?')}"


def _values(array: xr.DataArray) -> list[float]:
    return [float(v) for v in np.ravel(array.values)]


def _med(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return float(np.median(kept)) if kept else math.nan


def _sum(reads: list[list[float]]) -> float:
    return sum(_med(r) for r in reads)
