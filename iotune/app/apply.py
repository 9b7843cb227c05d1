"""``iotune apply``: write a user's dataset with the recommended (or given) settings.

The configuration is the recommendation of a results file under an objective, as
``recommend`` finds it, or an explicit ``--settings`` text; :mod:`iotune.convert` does
the conversion.  Every check runs before anything is created.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.convert.after import measure_after, measured_record, read_patterns, record_path
from iotune.convert.cluster import DEFAULT_WORKERS, connect
from iotune.convert.convert import DEFAULT_MAX_MEM, Job
from iotune.convert.engines import choose
from iotune.convert.layout import Layout, default_format, layout_of, parse_settings, writable
from iotune.convert.memory import INTERPRETER_BYTES, data_budget, limit_text
from iotune.convert.predict import Prediction, predict
from iotune.convert.report import ApplyReport
from iotune.convert.sources import SourceLike, expand
from iotune.convert.store_convert import convert_any as convert
from iotune.convert.store_convert import on_a_store
from iotune.convert.store_convert import prepare_any as prepare
from iotune.convert.stores import unfolded
from iotune.core.errors import UsageError
from iotune.core.units import parse_size
from iotune.model.objective import Objective

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["ApplyReport", "Prediction", "apply", "apply_with", "chosen_layout"]


def apply(
    results: str | Path | xr.Dataset | None,
    source: SourceLike | Sequence[SourceLike],
    target: str | os.PathLike[str],
    *,
    settings: str | None = None,
    objective: str | None = None,
    weights: str | None = None,
    max_size: str | None = None,
    max_ratio_loss: str | None = None,
    max_error: str | None = None,
    min_digits: str | None = None,
    variables: Sequence[str] | None = None,
    max_mem: int | str = DEFAULT_MAX_MEM,
    verify: str = "sample",
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    dry_run: bool = False,
    measure: bool = True,
    patterns: Sequence[str] | None = None,
    executor: str = "serial",
    scheduler: str | None = None,
) -> ApplyReport | Prediction:
    """Convert ``source`` to ``target`` with a sweep's recommended settings.

    Parameters
    ----------
    results
        A results file, its directory or Dataset; may be None with ``settings``.
    source
        A local netCDF/HDF5 file or Zarr store; or several netCDF/HDF5 files (a list,
        or a glob such as ``"data/tas_*.nc"``) opened as one dataset along the
        dimension whose coordinate differs between them, as ``open_mfdataset`` does.
    target
        Where to write: a netCDF4 file, a Zarr v3 store, or an HDF5 file (h5py/h5netcdf
        backends, with the recommendation's file-level knobs), by the recommended backend.
    settings
        An explicit configuration instead of the recommendation,
        ``"chunks=1x256x256 codec=zstd level=3"`` (``backend=zarr`` to choose the
        format; default by the target's suffix: ``.zarr`` Zarr, ``.h5``/``.hdf5`` HDF5 through
        h5netcdf with the file-level knobs, else netCDF4).
    objective, weights, max_size, max_ratio_loss, max_error, min_digits
        What "best" means, as for :func:`iotune.recommend`.
    variables
        The variables to convert; default those with the workload's dimensions.
        The others are copied with their own storage settings.
    max_mem
        Memory the conversion's process may hold (bytes or ``"1GiB"``; per worker on a
        dask cluster): the interpreter's estimate
        (:data:`iotune.convert.memory.INTERPRETER_BYTES`) is taken off, the regions get
        the rest (a smaller limit bounds the data only); a collection's regions get two
        thirds of that (each block is read in pieces, one per file, then concatenated).
    verify
        ``full`` (every region), ``sample`` (first, middle, last) or ``none``.
    resume
        Finish an interrupted conversion: regions in its journal are not written again.
    overwrite
        Replace an existing target (and discard an interrupted conversion).
    progress
        Show a progress bar in bytes on stderr.
    dry_run
        Create nothing: return the predicted size, time, peak memory and requests
        (:mod:`iotune.convert.predict`).
    measure
        After the conversion, time the sweep's read patterns on the source and the
        target, cold and repeated, and store the speedups beside the target
        (``TARGET.iotune-apply.json``, :mod:`iotune.convert.after`).
    patterns
        The read patterns measured after (default: the sweep's; with ``settings``
        and no results, ``timeseries`` and ``spatial``).
    executor, scheduler
        ``dask``: the regions of a Zarr target are written by the workers of a
        LocalCluster (one per core, at most 4), or of the dask scheduler at
        ``scheduler``; ``max_mem`` is then **per worker**: each worker's regions are
        planned from it, a LocalCluster's workers get it as their memory limit, and
        the report's engine line says so (the tree holds up to workers x ``max_mem``,
        and the calling process).  A netCDF4 or HDF5 target has one writer: it runs in
        this process, its chunks compressed by a thread per core feeding that writer
        where measured faster (:mod:`iotune.convert.pipeline`).  See
        :mod:`iotune.convert.engines`.

    Returns
    -------
    ApplyReport or Prediction
        What changed (chunks, codec, size), what was verified and the speedups
        measured after; with ``dry_run`` the :class:`Prediction`.

    Raises
    ------
    UsageError
        Before anything is created: see :func:`iotune.convert.convert.prepare`.
    VerificationError
        The target differs from the source; it keeps its temporary name.
    """
    goal = None
    if settings is None:
        goal = Objective.parse(
            objective,
            weights=weights,
            max_size=max_size,
            max_ratio_loss=max_ratio_loss,
            max_error=max_error,
            min_digits=min_digits,
        )
    return apply_with(
        results,
        source,
        target,
        objective=goal,
        settings=settings,
        variables=variables,
        max_mem=max_mem,
        verify=verify,
        resume=resume,
        overwrite=overwrite,
        progress=progress,
        dry_run=dry_run,
        measure=measure,
        patterns=patterns,
        executor=executor,
        scheduler=scheduler,
    )


def apply_with(
    results: str | Path | xr.Dataset | None,
    source: SourceLike | Sequence[SourceLike],
    target: str | os.PathLike[str],
    *,
    objective: Objective | None,
    settings: str | None,
    variables: Sequence[str] | None,
    max_mem: int | str,
    verify: str,
    resume: bool,
    overwrite: bool,
    progress: bool = True,
    dry_run: bool = False,
    measure: bool = True,
    patterns: Sequence[str] | None = None,
    executor: str = "serial",
    scheduler: str | None = None,
) -> ApplyReport | Prediction:
    """:func:`apply` with an :class:`Objective` made elsewhere (the command line's)."""
    target = unfolded(target)  # a Path (the command line's -o) folds s3://b/x to s3:/b/x
    ds = _results(results) if results is not None else None
    layout = chosen_layout(ds, objective=objective, settings=settings, target=Path(target))
    wanted = read_patterns(ds, patterns) if measure and not dry_run else ()
    try:
        limit = parse_size(max_mem)
    except ValueError as err:
        raise UsageError(f"--max-mem: {max_mem!r} is not a size like 1GiB") from err
    engine = choose(layout.writer, executor=executor, scheduler=scheduler, layout=layout)
    # per process: on a cluster each worker plans its regions from the whole --max-mem
    budget = data_budget(limit)
    if _files(source) > 1:  # read in pieces, then concatenated: three copies, not two
        budget = budget * 2 // 3
    try:
        job = prepare(
            source,
            target,
            layout,
            variables=variables,
            max_mem=budget,  # --max-mem bounds the process tree, the interpreters too
            resume=resume,
            overwrite=overwrite,
            # a quantised recommendation is verified within the error its objective allowed
            max_error=objective.max_error if objective is not None else None,
            min_digits=objective.min_digits if objective is not None else None,
        )
    except UsageError as err:  # its sizes as the user gave --max-mem
        raise UsageError(limit_text(err, budget=budget, limit=limit)) from err
    job.engine = engine
    said = _objective_said(ds, objective) if settings is None and ds is not None else ""
    if dry_run:
        try:
            predicted = predict(
                job, ds, source_text=_shown(source), target_text=str(target), verify_mode=verify
            )
        finally:
            job.source.close()
        return replace(predicted, objective=said)
    client = None
    try:
        if engine.where != "this process":
            # the worker's limit: at least what its plan holds (a small --max-mem bounds data)
            memory = max(limit, INTERPRETER_BYTES + data_budget(limit))
            client = connect(scheduler, workers=DEFAULT_WORKERS, memory=memory)
            engine = engine.on_workers(len(client.scheduler_info()["workers"]), limit)
        report = _convert(
            job, resume=resume, overwrite=overwrite, verify=verify, progress=progress, client=client
        )
    finally:
        if client is not None:
            cluster = client.cluster
            client.close()
            if cluster is not None:
                cluster.close()
    report = replace(
        report,
        engine=report.engine or engine.text(),
        readers=_readers(layout, ds, objective),
        reading=layout.reading_lines(),
        objective=said,
    )
    if wanted and on_a_store(job):
        report.after = {"skipped": "the patterns are not measured on object stores yet"}
        return report
    if report.state == "finished":  # resumed after the rename: measured already, or now
        found = measured_record(job.target, report.to_dict())
        if found is not None or not wanted:
            return replace(report, state="measured" if found else "finished", after=found)
    record_path(job.target).unlink(missing_ok=True)  # a replaced target's record is stale
    if wanted:
        report.after = measure_after(ds, job, report, patterns=wanted)
    return report


def _convert(
    job: Job, *, resume: bool, overwrite: bool, verify: str, progress: bool, client: Any = None
) -> ApplyReport:
    if not progress:
        return convert(job, resume=resume, overwrite=overwrite, verify_mode=verify, client=client)
    from tqdm.auto import tqdm

    with tqdm(
        total=job.total_bytes,
        unit="iB",  # with unit_scale and 1024: KiB, MiB, GiB (tqdm writes its prefix before)
        bar_format="{l_bar}{bar}| {n_fmt}iB/{total_fmt}iB [{elapsed}<{remaining}, {rate_fmt}]",
        unit_scale=True,
        unit_divisor=1024,
        file=sys.stderr,
        dynamic_ncols=True,
        desc=job.target.name,
    ) as bar:
        return convert(
            job,
            resume=resume,
            overwrite=overwrite,
            verify_mode=verify,
            on_bytes=bar.update,
            client=client,
        )


def chosen_layout(
    results: str | Path | xr.Dataset | None,
    *,
    objective: Objective | None,
    settings: str | None,
    target: Path,
) -> Layout:
    """The configuration to write: ``settings``, else the results' recommendation."""
    ds = _results(results) if results is not None else None
    dims = tuple(ds.iotune.workload.get("shape") or ()) if ds is not None else ()
    if settings is not None:
        given = parse_settings(settings, backend=default_format(target))
        backend = given.pop("backend", None) or default_format(target)
        return layout_of(given, dims=dims, backend=backend)
    if ds is None:
        raise UsageError("apply: give a RESULTS file, or the configuration with --settings")
    from iotune.analysis.recommend import recommend_with

    rec = recommend_with(ds, objective or Objective.parse(None), importance=False)
    found: dict[str, Any] = dict(rec.winner.settings)
    backend = str(found.get("backend") or default_format(target))
    if backend not in writable():
        raise UsageError(
            f"apply: the recommendation is for backend {backend!r}; apply writes "
            f"{', '.join(writable())} (give the configuration with --settings)"
        )
    # every knob of the format travels; the run's own parameters (concurrency...) do not
    return layout_of(found, dims=dims, backend=backend, strict=False)


def _readers(layout: Layout, ds: xr.Dataset | None, objective: Objective | None) -> dict[str, Any]:
    """Who opens the target without plugins, and what ``--portable`` left out of the pick."""
    from iotune.backends import readability

    found = readability({"backend": layout.backend, "codec": layout.codec.name}).to_dict()
    if ds is not None and objective is not None and objective.readers:
        found["note"] = ds.iotune.rank_by(objective).note
    return found


def _objective_said(ds: xr.Dataset, objective: Objective | None) -> str:
    """The objective the recommendation was for, as a line says it (why, when the default)."""
    from iotune.results.objective import own_patterns

    goal = (objective or Objective()).resolved(ds.iotune.metrics, own=own_patterns(ds))
    return goal.said


def _results(results: str | Path | xr.Dataset) -> xr.Dataset:
    from iotune.results.dataset import open_results

    return open_results(results) if isinstance(results, str | Path) else results


def _shown(source: SourceLike | Sequence[SourceLike]) -> str:
    """The source as typed: one path, or several joined (not a Python list)."""
    if isinstance(source, list | tuple):
        return ", ".join(map(str, source))
    return str(source)


def _files(source: SourceLike | Sequence[SourceLike]) -> int:
    """How many files ``source`` names (a URL: one)."""
    items = [source] if isinstance(source, str | os.PathLike) else list(source)
    if len(items) == 1 and "://" in os.fspath(items[0]):
        return 1
    return len(expand(source))
