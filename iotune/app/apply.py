"""``iotune apply``: write a user's dataset with the recommended (or given) settings.

The configuration is the recommendation of a results file under an objective, as
``recommend`` finds it, or an explicit ``--settings`` text; :mod:`iotune.convert` does
the conversion.  Every check runs before anything is created.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.convert.convert import DEFAULT_MAX_MEM
from iotune.convert.layout import FORMATS, Layout, layout_of, parse_settings
from iotune.convert.report import ApplyReport
from iotune.convert.store_convert import convert_any as convert
from iotune.convert.store_convert import prepare_any as prepare
from iotune.convert.stores import unfolded
from iotune.core.errors import UsageError
from iotune.core.units import parse_size
from iotune.model.objective import Objective

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["ApplyReport", "apply", "apply_with", "chosen_layout"]


def apply(
    results: str | Path | xr.Dataset | None,
    source: str | os.PathLike[str],
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
) -> ApplyReport:
    """Convert ``source`` to ``target`` with a sweep's recommended settings.

    Parameters
    ----------
    results
        A results file, its directory or Dataset; may be None with ``settings``.
    source
        A local netCDF/HDF5 file or Zarr store.
    target
        Where to write: a netCDF4 file or a Zarr v3 store, by the recommended backend.
    settings
        An explicit configuration instead of the recommendation,
        ``"chunks=1x256x256 codec=zstd level=3"`` (``backend=zarr`` to choose the
        format; default by the target's suffix, ``.zarr`` for Zarr).
    objective, weights, max_size, max_ratio_loss, max_error, min_digits
        What "best" means, as for :func:`iotune.recommend`.
    variables
        The variables to convert; default those with the workload's dimensions.
        The others are copied with their own storage settings.
    max_mem
        Memory the conversion may hold (bytes or ``"1GiB"``).
    verify
        ``full`` (every region), ``sample`` (first, middle, last) or ``none``.
    resume
        Finish an interrupted conversion: regions in its journal are not written again.
    overwrite
        Replace an existing target (and discard an interrupted conversion).
    progress
        Show a progress bar in bytes on stderr.

    Returns
    -------
    ApplyReport
        What changed (chunks, codec, size) and what was verified.

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
    )


def apply_with(
    results: str | Path | xr.Dataset | None,
    source: str | os.PathLike[str],
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
) -> ApplyReport:
    """:func:`apply` with an :class:`Objective` made elsewhere (the command line's)."""
    target = unfolded(target)  # a Path (the command line's -o) folds s3://b/x to s3:/b/x
    layout = chosen_layout(results, objective=objective, settings=settings, target=Path(target))
    try:
        limit = parse_size(max_mem)
    except ValueError as err:
        raise UsageError(f"--max-mem: {max_mem!r} is not a size like 1GiB") from err
    job = prepare(
        source,
        target,
        layout,
        variables=variables,
        max_mem=limit,
        resume=resume,
        overwrite=overwrite,
    )
    if not progress:
        return convert(job, resume=resume, overwrite=overwrite, verify_mode=verify)
    from tqdm.auto import tqdm

    with tqdm(
        total=job.total_bytes,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        file=sys.stderr,
        dynamic_ncols=True,
        desc=job.target.name,
    ) as bar:
        return convert(
            job, resume=resume, overwrite=overwrite, verify_mode=verify, on_bytes=bar.update
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
        given = parse_settings(settings)
        backend = given.pop("backend", None) or ("zarr" if target.suffix == ".zarr" else "netcdf4")
        return layout_of(given, dims=dims, backend=backend)
    if ds is None:
        raise UsageError("apply: give a RESULTS file, or the configuration with --settings")
    from iotune.analysis.recommend import recommend_with

    rec = recommend_with(ds, objective or Objective.parse(None), importance=False)
    found: dict[str, Any] = dict(rec.winner.settings)
    backend = str(found.get("backend") or "netcdf4")
    if backend not in FORMATS:
        raise UsageError(
            f"apply: the recommendation is for backend {backend!r}; apply writes "
            f"{' or '.join(FORMATS)} (give the configuration with --settings)"
        )
    return layout_of(found, dims=dims, backend=backend)


def _results(results: str | Path | xr.Dataset) -> xr.Dataset:
    from iotune.results.dataset import open_results

    return open_results(results) if isinstance(results, str | Path) else results
