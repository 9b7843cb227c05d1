"""What each ``iotune`` command does with its parsed arguments: call the api, print.

Every command that describes something (``validate``, ``plan``, ``show``,
``recommend``, ``backends``) prints text or, with ``--format json``, one JSON
document built from the api's data, never from the text.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def jsonable(value: Any) -> Any:
    """Plain JSON values: NumPy scalars as numbers, NaN as null, tuples and paths as lists/text."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def _emit(document: dict[str, Any]) -> None:
    print(json.dumps(jsonable(document), indent=2, sort_keys=False))


def validate(args: argparse.Namespace) -> int:
    from iotune.app import api

    sweep = api.load_spec(args.spec)
    points = api.grid_size(sweep)
    if args.format == "json":
        _emit(
            {
                "spec": args.spec,
                "valid": True,
                "name": sweep.name,
                "backends": list(sweep.backends),
                "swept": [p.name for p in sweep.swept],
                "grid_points": points,
            }
        )
    else:
        print(f"{args.spec}: valid sweep {sweep.name!r}: {points} grid points")
    return EXIT_OK


def plan(args: argparse.Namespace) -> int:
    from iotune.app import api

    made = api.make_plan(api.load_spec(args.spec), yes=args.allow_large)
    forecast = None if args.no_forecast else api.forecast_plan(made, scratch=args.scratch)
    if args.format != "json":
        print(api.plan_text(made))
        if forecast is not None:
            print("\n".join(api.forecast_text(forecast, made, scratch=args.scratch)))
        return EXIT_OK
    trials = [
        {"id": t.id, "backend": t.backend, "params": t.params, "hints": dict(t.hints)}
        for t in made.trials
    ]
    skipped = [{"point": p.coords, "reason": p.reason} for p in made.points if not p.applicable]
    _emit(
        {
            "name": made.sweep.name,
            "grid_points": len(made.points),
            "trials": trials,
            "not_applicable": skipped,
            "applies_nowhere": [
                {"parameter": n.dim, "value": n.value, "reason": n.reason}
                for n in api.plan_nowhere(made)
            ],
            **({"baselines": [asdict(b) for b in made.baselines]} if made.baselines else {}),
            **({} if forecast is None else {"forecast": api.forecast_json(forecast, made)}),
        }
    )
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    from iotune.app import api
    from iotune.cli import actions
    from iotune.core.errors import SpecError

    options = actions.run_options(args)
    try:
        ds = api.run_with(args.spec, options, progress=not args.no_progress)
    except SpecError as err:  # a value from --scheduler and the like: named as typed
        raise actions.named_by_flag(err, _execution_flags(args), section="execution") from err
    name = str(ds.attrs["name"])
    out = options.out or api.run_out(name)
    print(f"{name}: {api.counts_text(ds)}")
    for line in api.nowhere_lines(ds):
        print(f"  {line}")
    print(api.best_text(ds))
    if efficiency := api.efficiency_line(ds):  # how busy the executor kept its workers
        print(efficiency)
    for warning in actions.run_warnings(ds):
        print(f"iotune: warning: {warning}", file=sys.stderr)
    print(f"results: {out / 'results.nc'}")
    _plots(args, ds, out)
    return _exit_code(ds)


EXECUTION_FLAGS = ("executor", "workers", "scheduler", "per_host")


def _execution_flags(args: argparse.Namespace) -> dict[str, object]:
    """The ``execution.*`` values the command line gave (None: the spec's own)."""
    return {name: getattr(args, name, None) for name in EXECUTION_FLAGS}


def _exit_code(ds: Any) -> int:
    """1 when trials failed, after one line per reason and the code's meaning; else 0."""
    from iotune.app import api

    if not api.any_failed(ds):
        return EXIT_OK
    for line in api.failures_lines(ds):
        print(f"iotune: {line}", file=sys.stderr)
    counts = ds.iotune.counts()
    print(
        f"iotune: exit {EXIT_FAILED}: {counts.get('failed', 0)} of {sum(counts.values())} "
        "grid points failed; the others are measured (iotune show lists every reason)",
        file=sys.stderr,
    )
    return EXIT_FAILED


def _plots(args: argparse.Namespace, ds: Any, out: Path) -> None:
    from iotune.app import api

    if args.plot:
        for path in api.save_plots(ds, out):
            print(f"figure:  {path}")


def tune(args: argparse.Namespace) -> int:
    from iotune.app import api
    from iotune.app.tuning import search_overrides
    from iotune.cli import actions
    from iotune.core.errors import SpecError, UsageError

    if args.spec is None and args.replay is None:
        raise UsageError("tune: give a SPEC, or --replay GRID.nc")
    names = ("strategy", "budget", "seed", "prior", "parallel", *actions.OBJECTIVE_OPTIONS)
    given = {name: getattr(args, name) for name in names}
    search = search_overrides(**given)
    if isinstance(args.budget, str) and args.budget.isdigit():
        # a bare number is trials; someone who meant time should know before the hours pass
        print(
            f"iotune: --budget {args.budget} counts full-size trials, a cheaper fidelity as its "
            f"share (time on the machine: {args.budget}min, {args.budget}s or {args.budget}h)",
            file=sys.stderr,
        )
    options = actions.run_options(args)
    try:
        ds = api.tune_with(
            args.spec, options, search=search, replay=args.replay, progress=not args.no_progress
        )
    except SpecError as err:
        flagged = actions.named_by_flag(err, given, section="search")
        if flagged is err:
            flagged = actions.named_by_flag(err, _execution_flags(args), section="execution")
        raise flagged from err
    print(api.search_text(ds))
    if args.out is not None or args.replay is None:
        out = args.out or api.tune_out(str(ds.attrs["name"]))
        print(f"results: {out / 'results.nc'}")
        _plots(args, ds, out)
    return _exit_code(ds)


def clean(args: argparse.Namespace) -> int:
    from iotune.cli import actions

    _store_options(args)
    lines = actions.clean(
        args.out, args.scratch, storage=args.storage, endpoint=args.endpoint, region=args.region
    )
    for line in lines:
        print(line)
    if not any(line.startswith("removed") for line in lines):
        print("nothing to clean")
    return EXIT_OK


def show(args: argparse.Namespace) -> int:
    from iotune.app import api
    from iotune.results import summary
    from iotune.results.batches import loader_note

    ds = api.open_results(args.results)
    if args.format != "json":
        print(api.results_text(ds, include_not_applicable=args.all))
        return EXIT_OK
    attrs = ds.attrs
    _emit(
        {
            "name": attrs.get("name"),
            "host": attrs.get("provenance_host"),
            "scratch_fs_type": attrs.get("provenance_scratch_fs_type"),
            "started": attrs.get("started"),
            "swept": list(ds.iotune.swept),
            "counts": ds.iotune.counts(),
            "points": ds.iotune.points(include_not_applicable=args.all),
            # a point's figure per metric: MiB/s, or calls/s for the user's own code
            "units": {m: ds.iotune.unit(m) for m in ds.iotune.metrics},
            "best": summary.best(ds),
            "recommended": api.pick_dict(ds),
            **({"dask_chunks_split": splits} if (splits := summary.dask_splits(ds)) else {}),
            **({"batches_loader": note} if (note := loader_note(ds)) else {}),
        }
    )
    return EXIT_OK


def plot(args: argparse.Namespace) -> int:
    from iotune.app import api
    from iotune.cli import actions

    for path in api.save_plots(args.results, args.out):
        print(path)
    for note in actions.plot_notes(args.results):
        print(f"iotune: note: {note}", file=sys.stderr)
    return EXIT_OK


def recommend(args: argparse.Namespace) -> int:
    from iotune.app import api
    from iotune.cli import actions

    rec = api.recommend_with(args.results, actions.objective_of(args), variable=args.variable)
    print(api.recommendation_text(rec, fmt=args.format))
    return EXIT_OK


def apply(args: argparse.Namespace) -> int:
    from iotune.app import api
    from iotune.app.stopping import stop_on_signals
    from iotune.cli import actions
    from iotune.core.errors import UsageError

    wanted = 1 if args.settings else 2
    if len(args.inputs) < wanted:
        shape = "SOURCE... with --settings" if args.settings else "RESULTS SOURCE..."
        raise UsageError(f"apply: give {shape}, not {len(args.inputs)} paths")
    given = [name for name in actions.OBJECTIVE_OPTIONS if getattr(args, name) is not None]
    if args.settings and given:
        raise UsageError(f"--{given[0].replace('_', '-')}: not with --settings (nothing to rank)")
    results = None if args.settings else args.inputs[0]
    names = [n for n in (args.variables or "").split(",") if n] or None
    with stop_on_signals():  # SIGTERM unwinds like Ctrl-C: the partial target stays resumable
        report = api.apply_with(
            results,
            args.inputs[wanted - 1 :],  # several sources: one dataset, as open_mfdataset
            args.out,
            objective=None if args.settings else actions.objective_of(args),
            settings=args.settings,
            variables=names,
            max_mem=args.max_mem,
            verify=args.verify,
            resume=args.resume,
            overwrite=args.overwrite,
            progress=not args.no_progress,
            executor=args.executor,
            scheduler=args.scheduler,
            dry_run=args.dry_run,
            measure=not args.no_measure,
            patterns=[n for n in (args.patterns or "").split(",") if n] or None,
        )
    if args.format == "json":
        _emit(report.to_dict())
    else:
        print(report.text())
    return EXIT_OK


def _store_options(args: argparse.Namespace) -> None:
    """Refuse options of the other kind of storage than the command measures or cleans."""
    from iotune.core.errors import UsageError

    if args.storage:  # clean takes --scratch beside --storage: both are cleaned
        wrong: tuple[str, ...] = ("scratch", "transfer_size") if args.command == "calibrate" else ()
        why = "a file system's option; --storage measures an object store"
    else:
        wrong = ("endpoint", "region", "part_size", "request_concurrency")
        why = "only with --storage URL"
    for name in wrong:
        if getattr(args, name, None) is not None:
            raise UsageError(f"--{name.replace('_', '-')}: {why}")


def calibrate(args: argparse.Namespace) -> int:
    from iotune.cli import actions

    _store_options(args)
    if args.storage is None:
        scratch = args.scratch if args.scratch is not None else Path()
        options = {"size": args.size or "1GiB", "block": args.transfer_size or "16MiB"}
        repeats = args.repeats if args.repeats is not None else 3
        print(actions.calibrate(scratch, repeats=repeats, fmt=args.format, **options))
        return EXIT_OK
    return _calibrate_storage(args)


def _calibrate_storage(args: argparse.Namespace) -> int:
    from iotune.app import api
    from iotune.app.stopping import stop_on_signals

    given = {k: getattr(args, k) for k in ("size", "part_size", "request_concurrency", "repeats")}
    with stop_on_signals():  # SIGTERM and SIGHUP unwind too, so the objects are removed
        limit = api.calibrate_storage(
            args.storage,
            endpoint=args.endpoint,
            region=args.region,
            **{k: v for k, v in given.items() if v is not None},
        )
    if args.format == "json":
        _emit(limit)
    else:
        print(api.store_limit_text(limit))
    return EXIT_OK


def darshan(args: argparse.Namespace) -> int:
    from iotune.app import api

    found = api.from_darshan(args.log, trial_size=args.trial_size, all_files=args.all_files)
    print(found.text())
    path = api.write_darshan_spec(found, args.out)
    print(f"spec: {path}")
    print(f"next: iotune run {path}, then iotune recommend results/{found.spec['name']}")
    return EXIT_OK


def backends(args: argparse.Namespace) -> int:
    from iotune.app import api

    if args.format != "json":
        print(api.backends_text())
        return EXIT_OK
    _emit(api.backends_info())
    return EXIT_OK


def merge(args: argparse.Namespace) -> int:
    from iotune.app import api
    from iotune.cli import actions

    ds = actions.merge_files(args.results, out=args.out)
    swept = " ".join(ds.iotune.swept) or "nothing swept"
    print(f"merged {len(args.results)} sweeps ({swept}): {api.counts_text(ds)}")
    print(f"results: {args.out}")
    return EXIT_OK


def notebook(args: argparse.Namespace) -> int:
    from iotune.cli import actions

    executed = actions.notebook(args.notebook, args.parameter, out=args.out, kernel=args.kernel)
    print(f"notebook: {executed}")
    return EXIT_OK


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "validate": validate,
    "plan": plan,
    "run": run,
    "tune": tune,
    "clean": clean,
    "show": show,
    "plot": plot,
    "recommend": recommend,
    "apply": apply,
    "calibrate": calibrate,
    "darshan": darshan,
    "backends": backends,
    "merge": merge,
    "notebook": notebook,
}
