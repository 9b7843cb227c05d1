"""The ``iotune`` command: a thin argument layer over :mod:`iotune.api`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from iotune.errors import IotuneError, UsageError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iotune", description="Sweep storage settings and measure how fast data moves."
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("validate", help="check a sweep spec")
    p.add_argument("spec", type=Path)
    p = sub.add_parser("plan", help="print the trials a spec expands to")
    p.add_argument("spec", type=Path)
    p.add_argument("--yes", action="store_true", help="allow more than 10,000 grid points")
    p = sub.add_parser("run", help="run a sweep")
    p.add_argument("spec", type=Path)
    p.add_argument("-o", "--out", type=Path, help="output directory (default results/NAME)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run")
    p.add_argument("--overwrite", action="store_true", help="discard earlier results in OUT")
    p.add_argument("--scratch", type=Path, help="directory on the file system to measure")
    p.add_argument("--yes", action="store_true", help="allow more than 10,000 grid points")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--plot", action="store_true", help="also write the PNG figures into OUT")
    p.add_argument("--executor", choices=("serial", "dask"), help="override execution.executor")
    p.add_argument(
        "--workers", type=int, help="dask LocalCluster workers (implies --executor dask)"
    )
    p.add_argument("--scheduler", help="address of a running dask scheduler (implies dask)")
    p.add_argument("--per-host", type=int, help="storage trials at once per host (dask)")
    p = sub.add_parser("show", help="summarise a results file")
    p.add_argument("results", type=Path, help="results.nc or the directory holding it")
    p.add_argument("--all", action="store_true", help="also list not-applicable grid points")
    p = sub.add_parser("plot", help="write PNG figures of a results file")
    p.add_argument("results", type=Path, help="results.nc or the directory holding it")
    p.add_argument("-o", "--out", type=Path, help="directory for the PNGs (default: beside it)")
    p = sub.add_parser("recommend", help="best settings of a results file, ready to paste")
    p.add_argument("results", type=Path, help="results.nc or the directory holding it")
    p.add_argument("--objective", help="write or read:PATTERN (default read:timeseries)")
    p.add_argument("--weights", help="several metrics, e.g. write=1,read:timeseries=3")
    p.add_argument("--max-size", help="largest stored size allowed, e.g. 64MiB")
    p.add_argument("--max-ratio-loss", help="fraction (0-1) of the best ratio one may give up")
    p.add_argument("--variable", help="variable name in the exports (default: the workload's)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p = sub.add_parser("calibrate", help="measure the scratch file system's bandwidth limit")
    p.add_argument("--scratch", type=Path, default=Path(), help="directory to measure (default .)")
    p.add_argument("--size", default="1GiB", help="file size (default 1GiB)")
    p.add_argument("--block", default="16MiB", help="bytes per read/write call (default 16MiB)")
    p.add_argument("--repeats", type=int, default=3, help="write+read passes (default 3)")
    sub.add_parser("backends", help="list the format backends and what they support")
    p = sub.add_parser("merge", help="combine results of sweeps of the same workload")
    p.add_argument("results", type=Path, nargs="+", help="results files or their directories")
    p.add_argument("-o", "--out", type=Path, required=True, help="merged results file (.nc)")
    p = sub.add_parser("notebook", help="run a parameterised notebook with papermill")
    p.add_argument("notebook", type=Path)
    p.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="set a parameter; VALUE is a YAML literal (16, [zlib, none], {a.b: 1})",
    )
    p.add_argument(
        "-o", "--out", type=Path, help="folder for the executed notebook and its results"
    )
    p.add_argument("--kernel", help="Jupyter kernel name (default: the notebook's)")
    return parser


def _version() -> str:
    from iotune import __version__

    return f"iotune {__version__}"


def _validate(args: argparse.Namespace) -> int:
    from iotune.run.plan import grid_size
    from iotune.spec.parse import load_spec

    sweep = load_spec(args.spec)
    print(f"{args.spec}: valid sweep {sweep.name!r}: {grid_size(sweep)} grid points")
    return EXIT_OK


def _plan(args: argparse.Namespace) -> int:
    from iotune.run.plan import make_plan
    from iotune.spec.parse import load_spec

    plan = make_plan(load_spec(args.spec), yes=args.yes)
    skipped = [p for p in plan.points if not p.applicable]
    print(
        f"{len(plan.trials)} trials ({len(plan.points)} grid points, {len(skipped)} not applicable)"
    )
    for trial in plan.trials:
        print(f"  {trial.id}  {trial.backend:<8} {trial.label()}")
    for point in skipped:
        where = " ".join(f"{k}={v}" for k, v in point.coords.items())
        print(f"  {'-' * 12}  {where}: {point.reason}")
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    from iotune import api
    from iotune.results import summary
    from iotune.spec.parse import load_spec

    sweep = _with_execution(load_spec(args.spec), args)
    out = args.out or Path("results") / sweep.name
    ds = api.run(
        sweep,
        out=out,
        resume=args.resume,
        overwrite=args.overwrite,
        scratch=args.scratch,
        yes=args.yes,
        progress=not args.no_progress,
    )
    counts = summary.counts(ds)
    print(f"{sweep.name}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    print(summary.format_best(ds))
    if "stripe_settings" in ds.attrs and "not applied" in ds.attrs["stripe_settings"]:
        print(f"iotune: warning: {ds.attrs['stripe_settings']}", file=sys.stderr)
    print(f"results: {out / 'results.nc'}")
    if args.plot:
        for path in api.save_plots(ds, out):
            print(f"figure:  {path}")
    return EXIT_FAILED if counts.get("failed") else EXIT_OK


def _with_execution(sweep, args: argparse.Namespace):
    """Apply --executor/--workers/--scheduler/--per-host on top of the spec's execution."""
    import dataclasses

    changes = {
        k: getattr(args, k)
        for k in ("workers", "scheduler", "per_host")
        if getattr(args, k) is not None
    }
    executor = args.executor or ("dask" if changes else sweep.execution.executor)
    if executor == "serial" and changes:
        raise UsageError(f"--{next(iter(changes)).replace('_', '-')} needs --executor dask")
    if changes.get("workers", 1) < 1 or changes.get("per_host", 1) < 1:
        raise UsageError("--workers and --per-host must be at least 1")
    execution = dataclasses.replace(sweep.execution, executor=executor, **changes)
    return dataclasses.replace(sweep, execution=execution)


def _show(args: argparse.Namespace) -> int:
    from iotune.results import summary
    from iotune.results.dataset import open_results

    ds = open_results(args.results)
    print(
        f"sweep {ds.attrs.get('name')!r} on {ds.attrs.get('provenance_host', '?')} "
        f"({ds.attrs.get('provenance_scratch_fs_type', '?')}), {ds.attrs.get('started', '')}"
    )
    print(summary.table(ds, include_not_applicable=args.all))
    print(summary.format_best(ds))
    return EXIT_OK


def _plot(args: argparse.Namespace) -> int:
    from iotune import api

    for path in api.save_plots(args.results, args.out):
        print(path)
    from iotune.plot import notes
    from iotune.results.dataset import open_results

    for note in notes(open_results(args.results)):
        print(f"iotune: note: {note}", file=sys.stderr)
    return EXIT_OK


def _recommend(args: argparse.Namespace) -> int:
    from iotune.analysis import report
    from iotune.analysis.recommend import recommend

    rec = recommend(
        args.results,
        objective=args.objective,
        weights=args.weights,
        max_size=args.max_size,
        max_ratio_loss=args.max_ratio_loss,
        variable=args.variable,
    )
    print(report.render_json(rec) if args.format == "json" else report.render_text(rec))
    return EXIT_OK


def _calibrate(args: argparse.Namespace) -> int:
    from iotune.run.calibrate import cache_path, calibrate, format_limit

    limit = calibrate(args.scratch, size=args.size, block=args.block, repeats=args.repeats)
    print(format_limit(limit))
    print(f"saved to {cache_path()} (key {limit['key']}); sweeps on this file system record it")
    return EXIT_OK


def _backends(args: argparse.Namespace) -> int:
    from iotune.backends import backend_names, get_backend
    from iotune.spec.parameters import PARAMETERS

    classes = [get_backend(name) for name in backend_names()]
    columns = [p for p in PARAMETERS if any(p in c.parameters for c in classes)]
    head = ["backend", *columns, "parallel", "library"]
    rows = []
    for cls in classes:
        ok, detail = cls.available()
        cells = [cls.name]
        for param in columns:
            cells.append(
                "n/a" if param in cls.inapplicable else "yes" if param in cls.parameters else "-"
            )
        cells.append(_parallel(cls))
        cells.append(f"{cls.library} {detail}" if ok else f"NOT AVAILABLE: {detail}")
        rows.append(cells)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    print(
        "yes: swept and applied; n/a: accepted in multi-format sweeps, recorded as not "
        "applicable; -: not a parameter of this format"
    )
    for cls in classes:  # why parallel I/O is missing, where a build could have it
        support = getattr(cls, "parallel_support", None)
        ok, why = support() if support else (True, "")
        if not ok:
            print(f"{cls.name}: parallel (nprocs > 1) unavailable: {why}")
    return EXIT_OK


def _parallel(cls) -> str:
    support = getattr(cls, "parallel_support", None)
    return "-" if support is None else "yes" if support()[0] else "no"


def _merge(args: argparse.Namespace) -> int:
    from iotune.results import summary
    from iotune.results.dataset import save
    from iotune.results.merge import merge

    if args.out.suffix != ".nc":
        raise UsageError(f"-o {args.out}: the merged results file must end in .nc")
    ds = merge(args.results)
    save(ds, args.out)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(summary.counts(ds).items()))
    print(f"merged {len(args.results)} sweeps ({ds.attrs['swept'] or 'nothing swept'}): {counts}")
    print(f"results: {args.out}")
    return EXIT_OK


def _notebook(args: argparse.Namespace) -> int:
    from iotune.notebook import parse_parameters, run_notebook

    params = parse_parameters(args.parameter)
    executed = run_notebook(args.notebook, parameters=params, out=args.out, kernel=args.kernel)
    print(f"notebook: {executed}")
    return EXIT_OK


_COMMANDS = {
    "validate": _validate,
    "plan": _plan,
    "run": _run,
    "show": _show,
    "plot": _plot,
    "recommend": _recommend,
    "calibrate": _calibrate,
    "backends": _backends,
    "merge": _merge,
    "notebook": _notebook,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``iotune`` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except UsageError as err:
        print(f"iotune: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except IotuneError as err:
        print(f"iotune: {err}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        sys.stderr.close()  # output piped into head: not an error
        return EXIT_OK
    except KeyboardInterrupt:
        print("iotune: interrupted; finished trials are kept, rerun with --resume", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
