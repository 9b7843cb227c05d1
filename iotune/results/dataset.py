"""Trial results <-> the results Dataset (schema version 1); save and open.

One Dataset per sweep: a dimension per swept parameter, ``pattern`` for
reads and ``repeat``.  Failed, not-applicable and pending grid points hold
NaN with a ``status`` saying why; a point whose run was stopped before it had
the repeats the spec asks for is ``partial`` (:func:`partial_reason`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.core.errors import ResultsError
from iotune.core.files import temporary_beside
from iotune.model import parameters
from iotune.model.records import TrialResult
from iotune.model.renamed import rename_results
from iotune.model.spec import MeasureSpec
from iotune.results import baselines as baseline_results
from iotune.results import batches as batch_results
from iotune.results import objectstore as object_results
from iotune.results.attributes import SCHEMA_VERSION, attributes
from iotune.runner.plan import Plan

if TYPE_CHECKING:
    import xarray as xr

RESULTS_NAME = "results.nc"

_WRITE_VARS = {
    "write_MiBps": ("MiBps", "MiB/s", "write throughput (incl. close and fsync)"),
    "write_s": ("s", "s", "write time (incl. close and fsync)"),
    "write_cpu_s": ("cpu_s", "s", "CPU time of the write"),
}
_READ_VARS = {
    "read_MiBps": ("MiBps", "MiB/s", "read throughput (bytes delivered)"),
    "read_s": ("s", "s", "read time (incl. open and close)"),
    "read_cpu_s": ("cpu_s", "s", "CPU time of the read"),
    "resident_fraction": ("resident_fraction", "1", "page-cache residency when the read began"),
    "read_ops_per_s": ("ops_per_s", "1/s", "selections read per second"),
}
#: only in sweeps with the ``concurrency`` parameter
_PER_PROCESS_VARS = {
    "write_MiBps_per_process": (
        "per_process_MiBps",
        "MiB/s",
        "median write throughput of one of the concurrent processes",
    ),
    "read_MiBps_per_process": (
        "per_process_MiBps",
        "MiB/s",
        "median read throughput of one of the concurrent processes",
    ),
}


def to_dataset(
    plan: Plan,
    done: Mapping[str, TrialResult],
    *,
    probes: Mapping[int, TrialResult] | None = None,
    provenance: Mapping[str, str] | None = None,
) -> xr.Dataset:
    """Build the results Dataset of ``plan`` from the finished trials in ``done``.

    ``probes`` are the sweep's measurements of its reference configuration, by
    probe number (:mod:`iotune.results.noise`).
    """
    import xarray as xr

    sweep = plan.sweep
    pdims = plan.dims
    shape = tuple(len(plan.coords[d]) for d in pdims)
    patterns, repeats = sweep.read.patterns, sweep.measure.most
    arrays = _empty(shape, len(patterns), repeats)
    trials = {t.id: t for t in plan.trials}
    for point in plan.points:
        index = tuple(plan.coords[d].index(point.coords[d]) for d in pdims)
        _fill(
            arrays,
            index,
            point,
            done.get(point.trial_id) if point.trial_id else None,
            patterns,
            trials,
            sweep.measure,
        )
    concurrency = any("concurrency" in t.params for t in plan.trials)
    lossy = any(t.params.get("quantize", "off") != "off" for t in plan.trials)
    data_vars = _variables(arrays, pdims, concurrency=concurrency, lossy=lossy)
    coords: dict[str, Any] = {d: list(plan.coords[d]) for d in pdims}
    coords["pattern"] = list(patterns)
    coords["repeat"] = np.arange(repeats)
    ds = xr.Dataset(data_vars, coords=coords)
    for name in pdims:  # units and labels of the swept parameters, from the registry
        if name in parameters.PARAMETERS:
            ds[name].attrs.update(parameters.PARAMETERS[name].attrs())
    ds.attrs.update(attributes(plan, done, provenance or {}))
    from iotune.results.launched import extras

    mpi_vars, mpi_attrs = extras(plan, done)  # hints, striping, per-rank spread
    ds = ds.assign(mpi_vars)
    ds.attrs.update(mpi_attrs)
    if sweep.storage is not None:  # requests, bytes and first bytes of object-store trials
        ds = object_results.assign(ds, plan, done)
    if plan.baselines:  # the named baselines, along their own dimension
        ds = baseline_results.assign(ds, plan, done)
    ds = batch_results.assign(ds, plan, done)  # samples/s and first batch, with that pattern
    if probes:
        from iotune.results.noise import noise_variables

        noise_vars, noise_attrs = noise_variables(plan, probes)
        ds = ds.assign(noise_vars)
        ds.attrs.update(noise_attrs)
    return ds


#: variables per configuration and pattern, then per configuration: (units, long_name);
#: units None for labels
_INTERVAL = "95 % confidence bound of the median over repeats (order statistics)"
_PATTERN_VARS: dict[str, tuple[str | None, str]] = {
    "read_bytes": ("bytes", "bytes delivered per read"),
    "read_ops": ("1", "selections per read"),
    "read_MiBps_ci_low": ("MiB/s", f"read throughput: lower {_INTERVAL}"),
    "read_MiBps_ci_high": ("MiB/s", f"read throughput: upper {_INTERVAL}"),
}
_STOPS = "fixed, precision, max_repeats, interrupted, stopped_early (hopeless: not precise)"
_POINT_VARS: dict[str, tuple[str | None, str]] = {
    "write_MiBps_ci_low": ("MiB/s", f"write throughput: lower {_INTERVAL}"),
    "write_MiBps_ci_high": ("MiB/s", f"write throughput: upper {_INTERVAL}"),
    "repeats_used": ("1", "timed repeats the trial ran (after its untimed warm-up)"),
    "repeats_stop": (None, f"why the repeats stopped: {_STOPS}"),
    "trial_s": ("s", "the trial's wall time: writes, reads, launches and every repeat"),
    "file_bytes": ("bytes", "stored size"),
    "ratio": ("1", "compression ratio (raw/stored)"),
    "status": (None, "ok, partial (fewer repeats than asked), failed, not_applicable or pending"),
    "error": (None, "why a point failed or does not apply, or what it did not measure"),
    "trial_id": (None, "stable id of the trial that measured the point"),
    "effective": (None, "effective parameters of the trial (JSON)"),
    "file_properties": (None, "what the file and library hold, read back after writing (JSON)"),
}
#: only in sweeps with lossy ``quantize``: what quantisation cost on the workload's values
_ERROR_VARS: dict[str, tuple[str | None, str]] = {
    "max_abs_error": ("1", "largest absolute error of a stored value"),
    "max_rel_error": ("1", "largest relative error of a stored value"),
    "digits_kept": ("1", "significant decimal digits every stored value keeps"),
}


def _variables(
    arrays: Mapping[str, np.ndarray], pdims: tuple[str, ...], *, concurrency: bool, lossy: bool
) -> dict[str, Any]:
    """The data variables over the parameter dimensions ``pdims``, with their attributes."""
    rdims, wdims = (*pdims, "pattern", "repeat"), (*pdims, "repeat")

    def attrs(units: str | None, long: str) -> dict[str, str]:
        return {"long_name": long} if units is None else {"units": units, "long_name": long}

    data_vars: dict[str, Any] = {}
    if concurrency:
        for name, (_key, units, long) in _PER_PROCESS_VARS.items():
            dims = wdims if name.startswith("write") else rdims
            data_vars[name] = (dims, arrays[name], attrs(units, long))
    for name, (_key, units, long) in _WRITE_VARS.items():
        data_vars[name] = (wdims, arrays[name], attrs(units, long))
    for name, (_key, units, long) in _READ_VARS.items():
        data_vars[name] = (rdims, arrays[name], attrs(units, long))
    data_vars["read_cache"] = (
        rdims,
        arrays["read_cache"],
        attrs(None, "cache state of the read: cold, warm or not-cold"),
    )
    for name, (unit, long) in _PATTERN_VARS.items():
        data_vars[name] = ((*pdims, "pattern"), arrays[name], attrs(unit, long))
    for name, (unit, long) in (_POINT_VARS | (_ERROR_VARS if lossy else {})).items():
        data_vars[name] = (pdims, arrays[name], attrs(unit, long))
    return data_vars


def _empty(shape: tuple[int, ...], npat: int, nrep: int) -> dict[str, np.ndarray]:
    arrays = {n: np.full((*shape, nrep), np.nan) for n in _WRITE_VARS}
    arrays |= {n: np.full((*shape, npat, nrep), np.nan) for n in _READ_VARS}
    arrays["write_MiBps_per_process"] = np.full((*shape, nrep), np.nan)
    arrays["read_MiBps_per_process"] = np.full((*shape, npat, nrep), np.nan)
    arrays["read_cache"] = np.full((*shape, npat, nrep), "", dtype=object)
    arrays["read_bytes"] = np.full((*shape, npat), np.nan)
    arrays["read_ops"] = np.full((*shape, npat), np.nan)
    arrays["file_bytes"] = np.full(shape, np.nan)
    arrays["repeats_used"], arrays["trial_s"] = np.full(shape, np.nan), np.full(shape, np.nan)
    for name in ("write_MiBps_ci_low", "write_MiBps_ci_high"):
        arrays[name] = np.full(shape, np.nan)
    for name in ("read_MiBps_ci_low", "read_MiBps_ci_high"):
        arrays[name] = np.full((*shape, npat), np.nan)
    arrays["ratio"] = np.full(shape, np.nan)
    for name in _ERROR_VARS:
        arrays[name] = np.full(shape, np.nan)
    for name in ("status", "error", "trial_id", "effective", "repeats_stop", "file_properties"):
        arrays[name] = np.full(shape, "", dtype=object)
    return arrays


def _fill(
    arrays: dict[str, np.ndarray],
    index: tuple,
    point: Any,
    result: TrialResult | None,
    patterns: tuple[str, ...],
    trials: Mapping[str, Any],
    measure: MeasureSpec,
) -> None:
    if not point.applicable:
        arrays["status"][index], arrays["error"][index] = "not_applicable", point.reason
        return
    trial = trials[point.trial_id]
    arrays["trial_id"][index] = trial.id
    arrays["effective"][index] = json.dumps({"backend": trial.backend, **trial.effective()})
    if result is None:
        arrays["status"][index] = "pending"
        return
    arrays["status"][index], arrays["error"][index] = result.status, result.error
    if result.status != "ok":
        return
    short = partial_reason(result, measure)
    if short:
        arrays["status"][index], arrays["error"][index] = "partial", short
    n = len(result.write)
    for name, (key, *_rest) in (_WRITE_VARS | _PER_PROCESS_VARS).items():
        if name.startswith("write"):
            # one process alone is its own per-process figure
            arrays[name][(*index, slice(0, n))] = [w.get(key, w["MiBps"]) for w in result.write]
    unread = [pattern for pattern in patterns if not result.reads.get(pattern)]
    if unread and not short:  # launched ranks read back only what they wrote, as "full"
        arrays["error"][index] = (
            f"read patterns not measured: {', '.join(unread)} "
            "(MPI ranks read back what they wrote: the full pattern)"
        )
    for p, pattern in enumerate(patterns):
        runs = result.reads.get(pattern, [])
        if not runs:
            continue
        for name, (key, *_rest) in (_READ_VARS | _PER_PROCESS_VARS).items():
            if not name.startswith("write"):
                fallback = "MiBps" if name.endswith("per_process") else None
                values = [r.get(key, r.get(fallback, np.nan) if fallback else np.nan) for r in runs]
                arrays[name][(*index, p, slice(0, len(runs)))] = values
        arrays["read_cache"][(*index, p, slice(0, len(runs)))] = [r["cache"] for r in runs]
        arrays["read_bytes"][(*index, p)] = runs[0]["bytes"]
        arrays["read_ops"][(*index, p)] = runs[0]["ops"]
    arrays["file_bytes"][index] = result.file_bytes
    arrays["file_properties"][index] = json.dumps(result.stored, sort_keys=True, default=str)
    for name in _ERROR_VARS:
        arrays[name][index] = result.stored.get(name, np.nan)
    arrays["ratio"][index] = result.raw_bytes / (result.file_bytes or np.nan)
    _fill_intervals(arrays, index, result, patterns, measure)


def partial_reason(result: TrialResult, measure: MeasureSpec) -> str:
    """``"1 of 3 repeats (the run was stopped)"`` for a trial stopped short of its
    repeats, else ``""``.

    Only a stopped run leaves a trial short (``stop`` ``interrupted``); a search's
    ``stopped_early`` trial ends short on purpose and is complete.
    """
    if result.stop != "interrupted":
        return ""
    from iotune.measuring.precision import MIN_AUTO_REPEATS

    done = len(result.write)
    asked = MIN_AUTO_REPEATS if measure.adaptive else measure.repeats
    if done >= asked:
        return ""
    least = "at least " if measure.adaptive else ""
    return f"{done} of {least}{asked} repeats (the run was stopped)"


def _fill_intervals(
    arrays: dict[str, np.ndarray],
    index: tuple,
    result: TrialResult,
    patterns: tuple[str, ...],
    measure: MeasureSpec,
) -> None:
    """The 95 % interval of each median, how many repeats ran, and why they stopped."""
    from iotune.measuring import precision

    found = precision.series(result)
    names = {"write": ("write_MiBps_ci_low", "write_MiBps_ci_high", index)}
    for p, pattern in enumerate(patterns):
        names[f"read:{pattern}"] = ("read_MiBps_ci_low", "read_MiBps_ci_high", (*index, p))
    for metric, (low, high, where) in names.items():
        interval = precision.median_interval(found.get(metric, []))
        if interval is not None:
            arrays[low][where], arrays[high][where] = interval
    arrays["repeats_used"][index] = len(result.write)
    arrays["trial_s"][index] = result.seconds if result.seconds > 0 else np.nan
    adaptive = "precision" if precision.precise(result, measure.precision) else "max_repeats"
    # the scheduler's reason (interleaved trials) or the search's (stopped_early) first
    arrays["repeats_stop"][index] = result.stop or (adaptive if measure.adaptive else "fixed")


def save(ds: xr.Dataset, path: Path) -> Path:
    """Write ``ds`` to ``path`` atomically: a temporary file, fsync, then rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_beside(path)
    try:
        ds.to_netcdf(tmp, engine="netcdf4")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def results_path(path: str | Path) -> Path:
    """Accept a results file or the output directory that holds one."""
    path = Path(path)
    return path / RESULTS_NAME if path.is_dir() else path


def open_results(path: str | Path) -> xr.Dataset:
    """Open a results file (or output directory) written by iotune.

    Raises
    ------
    ResultsError
        The file is missing or is not an iotune results file.
    """
    import xarray as xr

    target = results_path(path)
    if not target.exists():
        raise ResultsError(f"no results at {target}")
    try:
        ds = xr.open_dataset(target, engine="netcdf4").load()
    except (OSError, ValueError) as err:
        raise ResultsError(f"{target} is not a readable results file: {err}") from err
    ds.close()
    version = ds.attrs.get("schema_version")
    if version != SCHEMA_VERSION:
        shown = getattr(version, "item", lambda: version)()
        raise ResultsError(
            f"{target} has schema_version {shown!r}; this iotune reads {SCHEMA_VERSION}"
        )
    return rename_results(ds)
