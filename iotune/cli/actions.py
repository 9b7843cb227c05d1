"""What only the command line needs around the api: its options made, its own tasks.

:func:`run_options` and :func:`objective_of` make the options objects
(:class:`~iotune.runner.options.RunOptions`, :class:`~iotune.model.objective.Objective`)
from parsed arguments, the same objects ``iotune.run`` and ``iotune.recommend``
make from their keyword arguments; the rest are commands' work that notebooks do
not call (cleaning, calibrating as text, merging files, papermill, warnings).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from iotune.core.errors import SpecError, UsageError
from iotune.model.objective import Objective
from iotune.results.dataset import open_results, save
from iotune.runner.calibrate_store import clean_storage
from iotune.runner.options import RunOptions
from iotune.runner.scratch import remove_leftovers, remove_stale_lock

if TYPE_CHECKING:
    import xarray as xr

#: the options of ``run`` and ``tune`` that make a RunOptions, by its field names
RUN_OPTIONS: tuple[str, ...] = ("out", "resume", "overwrite", "scratch", "executor")
RUN_OPTIONS += ("workers", "scheduler", "per_host", "force", "allow_large")
#: the objective options of ``recommend`` and ``tune``, by the Objective's parse names
OBJECTIVE_OPTIONS: tuple[str, ...] = ("objective", "weights", "max_size", "max_ratio_loss")
OBJECTIVE_OPTIONS += ("max_error", "min_digits", "readers", "max_tie_loss")


def run_options(args: argparse.Namespace) -> RunOptions:
    """The RunOptions of ``iotune run`` or ``iotune tune``'s parsed arguments."""
    return RunOptions(**{name: getattr(args, name) for name in RUN_OPTIONS})


def objective_of(args: argparse.Namespace) -> Objective:
    """The Objective of ``iotune recommend``'s parsed arguments."""
    given = {name: getattr(args, name) for name in OBJECTIVE_OPTIONS}
    return Objective.parse(given.pop("objective"), **given)


def run_warnings(ds: xr.Dataset) -> list[str]:
    """What a finished run should warn about: striping asked for but not applied."""
    stripes = str(ds.attrs.get("stripe_settings", ""))
    return [stripes] if "not applied" in stripes else []


def plot_notes(results: str | Path | xr.Dataset) -> list[str]:
    """Why a standard figure was left out (nothing to draw, no calibration)."""
    from iotune.plot import notes

    ds = open_results(results) if isinstance(results, str | Path) else results
    return notes(ds)


def clean(
    out: str | Path | None = None,
    scratch: str | Path | None = None,
    *,
    storage: str | None = None,
    endpoint: str | None = None,
    region: str | None = None,
) -> list[str]:
    """Remove what runs killed outright (SIGKILL, a dead node) left behind; one line each.

    Only ``iotune-scratch-*`` directories in ``out`` and ``scratch``, and areas
    below ``storage``'s prefix (``s3://bucket/prefix``), whose owner mark names a
    process of this host that is gone, and ``out``'s lock file if no process
    holds it; those left alone (another host's, a running sweep's) say why.
    """
    if out is None and scratch is None and storage is None:
        raise UsageError("clean: give OUT, --scratch DIR or --storage URL")
    places = {o: Path(p) for o, p in (("OUT", out), ("--scratch", scratch)) if p is not None}
    for option, place in places.items():
        if not place.is_dir():
            raise UsageError(f"{option} {place}: not an existing directory")
    lines = []
    for place in dict.fromkeys(p.resolve() for p in places.values()):
        lines += remove_leftovers(place, report_kept=True)
    if storage is not None:
        lines += clean_storage(storage, endpoint=endpoint, region=region)
    lock = remove_stale_lock(Path(out)) if out is not None else None
    return [*lines, lock] if lock else lines


def calibrate(
    scratch: str | Path, *, size: str, block: str, repeats: int, fmt: str = "text"
) -> str:
    """Measure the file system's limit, remember it, and say what was found (text or json)."""
    import json

    from iotune.runner.calibrate import cache_path, format_limit
    from iotune.runner.calibrate import calibrate as measure_limit

    limit = measure_limit(scratch, size=size, block=block, repeats=repeats)
    if fmt == "json":
        return json.dumps(limit, indent=2)
    saved = f"saved to {cache_path()} (key {limit['key']}); sweeps on this file system record it"
    return f"{format_limit(limit)}\n{saved}"


def merge_files(results: list[Path], *, out: Path) -> xr.Dataset:
    """Merge results of sweeps of one workload into the file ``out`` (``.nc``)."""
    from iotune.results.merge import merge

    if Path(out).suffix != ".nc":
        raise UsageError(f"-o {out}: the merged results file must end in .nc")
    ds = merge(results)
    save(ds, Path(out))
    return ds


def notebook(
    path: str | Path,
    parameters: list[tuple[str, str]],
    *,
    out: str | Path | None = None,
    kernel: str | None = None,
) -> Path:
    """Run a parameterised notebook with papermill; ``parameters`` are YAML literals."""
    from iotune.app.notebook import parse_parameters, run_notebook

    params = parse_parameters(parameters)
    return run_notebook(path, parameters=params, out=out, kernel=kernel)


def named_by_flag(err: SpecError, given: Mapping[str, object], *, section: str) -> UsageError:
    """``err`` about ``section.NAME`` told as ``--NAME``, the flag the user typed.

    A value given on the command line is checked where the spec's own is, so its error
    names the spec key (``search.budget``); a user who typed ``--budget`` reads that flag.
    Errors about keys no flag gave are returned unchanged.
    """
    key = err.field.removeprefix(f"{section}.").split("[", 1)[0]
    if not err.field.startswith(f"{section}.") or given.get(key) is None:
        return err
    return UsageError(f"--{key.replace('_', '-')}: {err.message}")
