"""The ``iotune`` command: a thin argument layer over :mod:`iotune.api`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iotune.errors import Interrupted, IotuneError, UsageError
from iotune.logs import configure

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
    p.add_argument(
        "--force", action="store_true", help="run even if scratch looks too small for a trial"
    )
    _tune_parser(sub)
    p = sub.add_parser("clean", help="remove scratch and locks left by runs that were killed")
    p.add_argument("out", type=Path, help="the run's output directory")
    p.add_argument("--scratch", type=Path, help="the --scratch directory the run used")
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
    p = sub.add_parser("darshan", help="summarise and diagnose a Darshan log; write its sweep")
    p.add_argument("log", type=Path, help="a Darshan log (.darshan)")
    p.add_argument("--spec", type=Path, help="spec to write (default sweeps/from-EXECUTABLE.yaml)")
    p.add_argument("--budget", default="4GiB", help="largest volume of a trial (default 4GiB)")
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


def _tune_parser(sub: Any) -> None:
    p = sub.add_parser("tune", help="search a spec's space adaptively (or replay a grid)")
    p.add_argument(
        "spec", type=Path, nargs="?", help="the spec (default with --replay: the grid's)"
    )
    p.add_argument("--replay", type=Path, metavar="GRID.nc", help="answer trials from a grid")
    p.add_argument("-o", "--out", type=Path, help="output directory (default results/NAME-tune)")
    p.add_argument("--strategy", help="grid, random, tpe, gp or auto (default: the spec's, auto)")
    p.add_argument("--budget", help="trials, or a share of the applicable points like 25%%")
    p.add_argument("--objective", help="write, read:PATTERN or weights write=1,read:spatial=2")
    p.add_argument("--max-size", help="largest stored size allowed, e.g. 64MiB")
    p.add_argument("--seed", type=int, help="the search's seed")
    p.add_argument("--parallel", type=int, help="trials asked at once")
    p.add_argument("--resume", action="store_true", help="continue an interrupted search")
    p.add_argument("--overwrite", action="store_true", help="discard earlier results in OUT")
    p.add_argument("--scratch", type=Path, help="directory on the file system to measure")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--executor", choices=("serial", "dask"), help="override execution.executor")
    p.add_argument("--workers", type=int, help="dask LocalCluster workers (implies dask)")


def _version() -> str:
    from iotune import __version__

    return f"iotune {__version__}"


def _validate(args: argparse.Namespace) -> int:
    from iotune import api

    sweep = api.load_spec(args.spec)
    print(f"{args.spec}: valid sweep {sweep.name!r}: {api.grid_size(sweep)} grid points")
    return EXIT_OK


def _plan(args: argparse.Namespace) -> int:
    from iotune import api

    print(api.plan_text(api.make_plan(api.load_spec(args.spec), yes=args.yes)))
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    from iotune import api

    options = {k: getattr(args, k) for k in ("executor", "workers", "scheduler", "per_host")}
    sweep = api.load_spec(args.spec, overrides=api.execution_overrides(**options))
    out = args.out or Path("results") / sweep.name
    ds = api.run(
        sweep,
        out=out,
        resume=args.resume,
        overwrite=args.overwrite,
        scratch=args.scratch,
        yes=args.yes,
        progress=not args.no_progress,
        force=args.force,
    )
    print(f"{sweep.name}: {api.counts_text(ds)}")
    print(api.best_text(ds))
    for warning in api.run_warnings(ds):
        print(f"iotune: warning: {warning}", file=sys.stderr)
    print(f"results: {out / 'results.nc'}")
    if args.plot:
        for path in api.save_plots(ds, out):
            print(f"figure:  {path}")
    return EXIT_FAILED if api.any_failed(ds) else EXIT_OK


def _tune(args: argparse.Namespace) -> int:
    from iotune import api

    if args.spec is None and args.replay is None:
        raise UsageError("tune: give a SPEC, or --replay GRID.nc")
    budget = args.budget
    if budget is not None and budget.isdigit():
        budget = int(budget)
    options = {"executor": args.executor, "workers": args.workers}
    overrides = api.execution_overrides(**options) if args.executor or args.workers else {}
    ds = api.tune(
        args.spec,
        out=args.out,
        replay=args.replay,
        strategy=args.strategy,
        budget=budget,
        objective=args.objective,
        max_size=args.max_size,
        seed=args.seed,
        parallel=args.parallel,
        resume=args.resume,
        overwrite=args.overwrite,
        scratch=args.scratch,
        progress=not args.no_progress,
        overrides=overrides,
    )
    print(api.search_text(ds))
    if args.out is not None or args.replay is None:
        out = args.out or Path("results") / f"{ds.attrs['name']}-tune"
        print(f"results: {out / 'results.nc'}")
    return EXIT_FAILED if api.any_failed(ds) else EXIT_OK


def _clean(args: argparse.Namespace) -> int:
    from iotune import api

    lines = api.clean(args.out, scratch=args.scratch)
    for line in lines:
        print(line)
    if not any(line.startswith("removed") for line in lines):
        print("nothing to clean")
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from iotune import api

    ds = api.open_results(args.results)
    print(api.results_text(ds, include_not_applicable=args.all))
    return EXIT_OK


def _plot(args: argparse.Namespace) -> int:
    from iotune import api

    for path in api.save_plots(args.results, args.out):
        print(path)
    for note in api.plot_notes(args.results):
        print(f"iotune: note: {note}", file=sys.stderr)
    return EXIT_OK


def _recommend(args: argparse.Namespace) -> int:
    from iotune import api

    options = ("objective", "weights", "max_size", "max_ratio_loss", "variable")
    rec = api.recommend(args.results, **{k: getattr(args, k) for k in options})
    print(api.recommendation_text(rec, fmt=args.format))
    return EXIT_OK


def _calibrate(args: argparse.Namespace) -> int:
    from iotune import api

    print(api.calibrate(args.scratch, size=args.size, block=args.block, repeats=args.repeats))
    return EXIT_OK


def _darshan(args: argparse.Namespace) -> int:
    from iotune import api

    found = api.from_darshan(args.log, budget=args.budget)
    print(found.text())
    path = api.write_darshan_spec(found, args.spec)
    print(f"spec: {path}")
    print(f"next: iotune run {path}, then iotune recommend results/{found.spec['name']}")
    return EXIT_OK


def _backends(args: argparse.Namespace) -> int:
    from iotune import api

    print(api.backends_text())
    return EXIT_OK


def _merge(args: argparse.Namespace) -> int:
    from iotune import api

    ds = api.merge_files(args.results, out=args.out)
    swept = " ".join(ds.iotune.swept) or "nothing swept"
    print(f"merged {len(args.results)} sweeps ({swept}): {api.counts_text(ds)}")
    print(f"results: {args.out}")
    return EXIT_OK


def _notebook(args: argparse.Namespace) -> int:
    from iotune import api

    executed = api.notebook(args.notebook, args.parameter, out=args.out, kernel=args.kernel)
    print(f"notebook: {executed}")
    return EXIT_OK


_COMMANDS = {
    "validate": _validate,
    "plan": _plan,
    "run": _run,
    "tune": _tune,
    "clean": _clean,
    "show": _show,
    "plot": _plot,
    "recommend": _recommend,
    "calibrate": _calibrate,
    "darshan": _darshan,
    "backends": _backends,
    "merge": _merge,
    "notebook": _notebook,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``iotune`` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    configure(0)  # iotune's log records and warnings as "iotune: ..." lines on stderr
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
    except Interrupted as err:
        print(f"iotune: {err}; finished trials are kept, rerun with --resume", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("iotune: interrupted; finished trials are kept, rerun with --resume", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
