"""Measured after a conversion: the sweep's read patterns on the real source and target.

Each pattern reads the converted variable of the SOURCE and of the TARGET as a
trial reads its file (:func:`iotune.runner.xarray_read.read_variable`: opened
through the format's xarray engine with the configuration's read-side knobs,
``.values`` of the pattern's selections from :func:`iotune.measuring.access.selections`,
closed), from a verified cold cache (:func:`iotune.measuring.measure.prepare_cache`),
repeated as often as the sweep repeated (3 at least), source and target
alternating.  The speedup of a pattern is the source's median seconds over the
target's, with the bootstrap interval of :func:`iotune.results.speedup.ratio_interval`.
The record is written beside the target as ``TARGET.iotune-apply.json``.

The patterns are the sweep's built-in ones (``full``, ``spatial``, ``timeseries``,
``random``) with its sizes (pixels, window); without results (``--settings``)
``timeseries`` and ``spatial`` at their default sizes, or those of ``--patterns``.
"""

from __future__ import annotations

import datetime
import json
import math
import platform
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from iotune.backends import get_backend
from iotune.backends.base import SlabBackend
from iotune.convert.after_user import time_user, user_patterns
from iotune.convert.layout import source_format
from iotune.convert.source import STORE
from iotune.core.errors import IotuneError, UsageError
from iotune.core.units import format_duration
from iotune.measuring import measure
from iotune.measuring.access import selections
from iotune.model.spec import ReadSpec, Workload
from iotune.results.speedup import CONFIDENCE, RESAMPLES, ratio_interval
from iotune.runner.xarray_read import read_variable

if TYPE_CHECKING:
    import xarray as xr

#: the patterns measured without results, and the ones measured after at all
DEFAULT_PATTERNS = ("timeseries", "spatial")
MEASURED = ("full", "spatial", "timeseries", "random")
MIN_REPEATS = 3
MAX_COLD_RESIDENCY = 0.05
SUFFIX = ".iotune-apply.json"
METHOD = (
    "speedup = median seconds of the source / the target's, over repeats, each read from a "
    f"verified cold cache; interval: {CONFIDENCE:.0%} percentile bootstrap of that ratio "
    f"({RESAMPLES} resamples of both sides' repeats, seeded)"
)


def read_patterns(ds: xr.Dataset | None, asked: Sequence[str] | None) -> tuple[str, ...]:
    """The patterns to measure after: ``asked``, else the sweep's (its own code included).

    Raises
    ------
    UsageError
        A pattern that cannot be measured on the files: neither built in nor the
        user's code of the sweep (the ``batches`` loader is sweep-only for now).
    """
    swept = tuple(ds.iotune.patterns) if ds is not None else ()
    own = tuple(user_patterns(ds))
    if asked is None:
        found = tuple(p for p in swept if p in MEASURED or p in own)
        return found or DEFAULT_PATTERNS
    for name in asked:
        if name not in MEASURED and name not in own:
            allowed = ", ".join((*MEASURED, *own))
            raise UsageError(
                f"--patterns: {name!r} cannot be measured after a conversion; allowed: {allowed}"
            )
    return tuple(dict.fromkeys(asked))


def record_path(target: Path) -> Path:
    """Where the record of a target goes: beside it, ``TARGET.iotune-apply.json``."""
    return target.with_name(target.name + SUFFIX)


def measured_record(target: Path, conversion: dict[str, Any]) -> dict[str, Any] | None:
    """The record beside ``target`` of the conversion ``conversion`` (a report's ``to_dict``),
    or None: no record, or one of an earlier conversion to the same path."""
    where = record_path(target)
    if not where.is_file():
        return None
    try:
        record = json.loads(where.read_text())
    except ValueError:  # torn by a kill while it was written: measure again
        return None
    keys = ("settings", "seconds", "bytes_after", "regions")
    same = all(record.get("conversion", {}).get(k) == conversion.get(k) for k in keys)
    return dict(record) if same else None


def measure_after(
    ds: xr.Dataset | None,
    job: Any,
    report: Any,
    *,
    patterns: Sequence[str],
    repeats: int | None = None,
) -> dict[str, Any]:
    """Time ``patterns`` on the job's source and target; write and return the record.

    Parameters
    ----------
    ds
        The sweep's results (its pattern sizes, repeats, cold-residency limit), or None.
    job
        The finished :class:`iotune.convert.convert.Job`.
    report
        Its :class:`iotune.convert.report.ApplyReport` (kept in the record).
    patterns
        From :func:`read_patterns`.
    repeats
        Repeats per side (default the sweep's, :data:`MIN_REPEATS` at least).
    """
    name = job.converted[0]
    source_path, target_path = Path(job.source.path), Path(job.target)
    if len(job.source.paths) > 1:  # the patterns read one store; the source is several
        why = "the source is several files; the patterns read one file or store"
        record = _record(ds, job, report, name=name, repeats=0, patterns={})
        record["skipped"] = why
        record_path(target_path).write_text(json.dumps(record, indent=1, default=str) + "\n")
        return record
    workload, read = _sweep_sizes(ds, job, name)
    count = max(MIN_REPEATS, repeats or _sweep_repeats(ds))
    limit = (
        float(ds.attrs.get("max_cold_residency", MAX_COLD_RESIDENCY))
        if ds is not None
        else MAX_COLD_RESIDENCY
    )
    params = _read_params(ds, job)
    sides = {
        "source": (_reader(source_format(store=job.source.kind == STORE)), source_path),
        "target": (_reader(job.layout.backend), target_path),
    }
    own = user_patterns(ds, near=(target_path.resolve().parent, source_path.resolve().parent))
    measured: dict[str, Any] = {}
    for pattern in patterns:
        try:
            if pattern in own:
                where = {side: (type(b).name, str(p)) for side, (b, p) in sides.items()}
                measured[pattern] = time_user(
                    own[pattern], where, repeats=count, limit=limit, params=params, variable=name
                ) | {"per_call": True}  # one call of the user's code: said as seconds a call
            else:
                wanted = selections(pattern, workload, read)
                measured[pattern] = _time_builtin(sides, wanted, count, limit, params, name)
        except (IotuneError, OSError, BrokenProcessPool) as err:  # the conversion stands
            measured[pattern] = {"error": " ".join(str(err).split()) or type(err).__name__}
            continue
        row = measured[pattern]
        speedup, low, high = ratio_interval(row["source_s"], row["target_s"])
        measured[pattern] = {
            "speedup": _finite(speedup),
            "low": _finite(low),
            "high": _finite(high),
            **row,
        }
    record = _record(ds, job, report, name=name, repeats=count, patterns=measured)
    record_path(target_path).write_text(json.dumps(record, indent=1, default=str) + "\n")
    return record


def _time_builtin(
    sides: dict[str, tuple[SlabBackend, Path]],
    wanted: list[Any],
    count: int,
    limit: float,
    params: dict[str, Any],
    name: str,
) -> dict[str, Any]:
    """A built-in pattern's selections read ``count`` times per side, cold, alternating."""
    times: dict[str, list[float]] = {"source": [], "target": []}
    caches: dict[str, list[str]] = {"source": [], "target": []}
    nbytes = 0
    for r in range(count):
        for side in ("source", "target") if r % 2 == 0 else ("target", "source"):
            backend, path = sides[side]
            files = backend.paths(path)
            state, _ = measure.prepare_cache(files, mode="cold", max_residency=limit)
            clock, nbytes, *_ = read_variable(backend, path, params, wanted, variable=name)
            times[side].append(round(clock.wall, 6))
            caches[side].append(state)
    return {
        "source_s": times["source"],
        "target_s": times["target"],
        "bytes": nbytes,
        "cache_source": caches["source"],
        "cache_target": caches["target"],
    }


def _reader(name: str) -> SlabBackend:
    """The backend whose xarray open a trial of format ``name`` reads through."""
    backend = get_backend(name)()
    assert isinstance(backend, SlabBackend)  # netcdf4 and zarr: the formats apply writes
    return backend


def _record(
    ds: xr.Dataset | None, job: Any, report: Any, *, name: str, repeats: int, patterns: dict
) -> dict[str, Any]:
    from iotune import __version__

    conversion = {k: v for k, v in report.to_dict().items() if k != "after"}
    return {
        "iotune_version": __version__,
        "host": platform.node(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "source": str(Path(job.source.path).resolve()),
        "target": str(Path(job.target).resolve()),
        "settings": job.layout.text(),
        "results": str(ds.encoding.get("source", "")) if ds is not None else "",
        "variable": name,
        "repeats": repeats,
        "method": METHOD,
        "patterns": patterns,
        "conversion": conversion,
        "record": str(record_path(Path(job.target))),
    }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _sweep_repeats(ds: xr.Dataset | None) -> int:
    try:
        return int(ds.attrs.get("repeats", MIN_REPEATS)) if ds is not None else MIN_REPEATS
    except (TypeError, ValueError):  # "auto": adaptive repeats
        return MIN_REPEATS


def _sweep_sizes(ds: xr.Dataset | None, job: Any, name: str) -> tuple[Workload, ReadSpec]:
    """The variable as a workload (for the selections), and the sweep's pattern sizes."""
    var = job.source.ds[name]
    swept = dict(ds.iotune.workload) if ds is not None else {}
    dims = tuple(swept.get("shape") or ())
    # the selections are positional: the sweep's names when the variable has as many
    names = dims if len(dims) == var.ndim else tuple(map(str, var.dims))
    workload = Workload(names, tuple(var.shape), str(var.dtype), seed=int(swept.get("seed", 0)))
    if ds is None:
        return workload, ReadSpec()
    from iotune.specfile.parse import parse_read

    data = yaml.safe_load(ds.iotune.spec or "{}") or {}
    section = dict(data.get("read") or {})
    # the user's code and the loader are not measured after: their entries are left out
    section["patterns"] = [p for p in section.get("patterns", ["full"]) if isinstance(p, str)]
    section.pop("batches", None)
    section["patterns"] = [p for p in section["patterns"] if p != "batches"] or ["full"]
    if names != dims:  # sizes named by the sweep's dimensions do not fit: the defaults
        section.pop("spatial", None)
        section.get("random", {}).pop("shape", None)
    return workload, parse_read(section, workload)


def _read_params(ds: xr.Dataset | None, job: Any) -> dict[str, Any]:
    """The read-side knobs of the configuration (chunk cache, dask chunks), as the sweep read."""
    if ds is None:
        return {}
    from iotune.convert.probe import sweep_measured

    return dict(sweep_measured(ds, job.layout).settings)


def after_text(record: dict[str, Any]) -> list[str]:
    """Lines for the terminal: per pattern the speedup, its interval and the medians."""
    if record.get("skipped"):
        return [f"  not measured after: {record['skipped']}"]
    lines = [
        f"  measured after ({record['repeats']} cold repeats per side, {record['variable']}; "
        f"record {record['record']}):"
    ]
    for pattern, row in record["patterns"].items():
        if "error" in row:
            lines.append(f"    read:{pattern:<12} not measured: {row['error']}")
            continue
        src, tgt = _median(row["source_s"]), _median(row["target_s"])
        each = " a call" if row.get("per_call") else ""
        lines.append(
            f"    read:{pattern:<12} {_times(row['speedup']):>8} "
            f"[{_times(row['low'])} to {_times(row['high'])}]  "
            f"source {format_duration(src)} -> target {format_duration(tgt)}{each}"
        )
    return lines


def _median(values: list[float]) -> float:
    import statistics

    return statistics.median(values) if values else math.nan


def _times(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g}x"
