"""The ``iotune`` command: a thin argument layer over :mod:`iotune.app.api`.

One meaning per option across commands: ``-o/--out`` is always where the
command writes (a directory for run, tune, plot and notebook; a file for merge
and for darshan's spec); ``--format text|json`` on every command that
describes something; ``--allow-large`` lifts the 10,000-point guard; the
execution and objective options of ``run`` and ``recommend`` mean the same on
``tune``.  Old spellings keep working for one release, with a warning.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iotune.cli.commands import COMMANDS, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from iotune.core.errors import DeprecatedOptionWarning, Interrupted, IotuneError, UsageError
from iotune.core.logs import configure
from iotune.model.spec import STRATEGIES

#: (command or None for every command, old option) -> its new spelling; removed in 0.3
DEPRECATED = {
    (None, "--yes"): "--allow-large",
    ("darshan", "--spec"): "--out",
    ("darshan", "--budget"): "--trial-size",
    ("calibrate", "--block"): "--transfer-size",  # what a sweep calls transfer_size
}
RESULTS_HELP = "results.nc or the directory holding it"
EXIT_CODES = """exit codes:
  0        done
  1        done, but some trials failed (each is recorded with its reason; the
           others are measured)
  2        refused: bad input, said in one line; nothing was created
  128+N    stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP); finished
           trials are kept, rerun with --resume"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iotune",
        description="Sweep storage settings and measure how fast data moves.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=_version())
    _verbosity(parser, argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _spec_commands(sub)
    _run_parser(sub)
    _tune_parser(sub)
    _results_commands(sub)
    _apply_parser(sub)
    _other_commands(sub)
    return parser


def _verbosity(p: argparse.ArgumentParser, default: Any) -> None:
    p.add_argument("-v", "--verbose", action="count", default=default, help="say more (-vv: debug)")
    p.add_argument(
        "-q", "--quiet", action="store_true", default=default, help="errors only, no warnings"
    )


def _command(sub: Any, name: str, help: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help, description=help)
    _verbosity(p, argparse.SUPPRESS)  # also after the command: `iotune run -v spec.yaml`
    return p


def _format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")


def _allow_large(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-large", action="store_true", help="allow more than 10,000 grid points")


def _spec_commands(sub: Any) -> None:
    p = _command(sub, "validate", "check a sweep spec")
    p.add_argument("spec", type=Path)
    _format(p)
    p = _command(sub, "plan", "print the trials a spec expands to and what they will cost")
    p.add_argument("spec", type=Path)
    p.add_argument(
        "--scratch", type=Path, default=Path(), help="where the run will measure (probed)"
    )
    p.add_argument(
        "--no-forecast", action="store_true", help="list the trials only, without the probe"
    )
    _allow_large(p)
    _format(p)


def _measuring(p: argparse.ArgumentParser, out_help: str) -> None:
    """Options shared by run and tune: output, scratch, safety and where trials run."""
    p.add_argument("-o", "--out", type=Path, help=out_help)
    p.add_argument("--resume", action="store_true", help="continue an interrupted run")
    p.add_argument("--overwrite", action="store_true", help="discard earlier results in OUT")
    p.add_argument("--scratch", type=Path, help="directory on the file system to measure")
    _allow_large(p)
    p.add_argument(
        "--force", action="store_true", help="run even if scratch looks too small for a trial"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--plot", action="store_true", help="also write the PNG figures into OUT")
    p.add_argument("--executor", choices=("serial", "dask"), help="override execution.executor")
    p.add_argument("--workers", type=int, help="dask LocalCluster workers (implies dask)")
    p.add_argument("--scheduler", help="address of a running dask scheduler (implies dask)")
    p.add_argument("--per-host", type=int, help="storage trials at once per host (dask)")


def _objective(p: argparse.ArgumentParser) -> None:
    """Options shared by recommend and tune: what 'best' means."""
    p.add_argument(
        "--objective",
        help="write or read:PATTERN (default: the sweep's read pattern of your own code, "
        "else batches, else timeseries, else its first; write when it reads nothing)",
    )
    p.add_argument("--weights", help="several metrics, e.g. write=1,read:timeseries=3")
    p.add_argument("--max-size", help="largest stored size allowed, e.g. 64MiB")
    p.add_argument("--max-ratio-loss", help="fraction (0-1) of the best ratio one may give up")
    p.add_argument(
        "--max-error", help="largest absolute error quantisation may add (lossy needs a limit)"
    )
    p.add_argument("--min-digits", help="significant digits every quantised value must keep")
    p.add_argument(
        "--portable",
        action="store_const",
        const="all",
        dest="readers",
        help="only codecs every reader of the format opens without plugins (zlib, none)",
    )
    p.add_argument(
        "--readers", help="only codecs these readers open without plugins, e.g. ncdump,h5netcdf"
    )
    p.add_argument(
        "--max-tie-loss",
        help="fraction (0-1) slower than the fastest a tie-break may pick (default 0.05)",
    )


def _run_parser(sub: Any) -> None:
    p = _command(sub, "run", "run a sweep")
    p.add_argument("spec", type=Path)
    _measuring(p, "output directory (default results/NAME)")


def _tune_parser(sub: Any) -> None:
    p = _command(sub, "tune", "search a spec's space adaptively (or replay a grid)")
    p.add_argument(
        "spec", type=Path, nargs="?", help="the spec (default with --replay: the grid's)"
    )
    p.add_argument("--replay", type=Path, metavar="GRID.nc", help="answer trials from a grid")
    _measuring(p, "output directory (default results/NAME-tune)")
    _objective(p)
    strategies = ", ".join(STRATEGIES)
    p.add_argument("--strategy", help=f"{strategies} (default: the spec's, auto)")
    p.add_argument(
        "--budget",
        help="full-size trials (a trial at fidelity f counts as f), a share of that cost "
        "like 25%% (of every applicable point at full size), or time on the machine like "
        "30min or 2h (the trials' wall times)",
    )
    p.add_argument(
        "--prior",
        action="append",
        metavar="RESULTS",
        help="earlier results to start from (repeatable; replaces the spec's search.prior)",
    )
    p.add_argument("--seed", type=int, help="the search's seed")
    p.add_argument("--parallel", type=int, help="trials asked at once")


def _apply_parser(sub: Any) -> None:
    p = _command(sub, "apply", "rewrite a dataset with the recommended (or given) settings")
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="PATH",
        help="RESULTS SOURCE... (SOURCE... with --settings): results.nc, then the "
        "netCDF/HDF5 file or Zarr store; several files or a quoted glob ('data/tas_*.nc') "
        "are one dataset along their record dimension",
    )
    # a Path as on every command; Path folds s3://b/x to s3:/b/x: app/apply.py unfolds it
    p.add_argument(
        "-o",
        "--out",
        type=Path,
        required=True,
        help="the target file or store (local, s3://, gs://, az://)",
    )
    _objective(p)
    p.add_argument(
        "--settings",
        help='the configuration instead: "chunks=1x256x256 codec=zstd" (also backend=, level=, '
        "shuffle=, quantize=, shards=, and HDF5 file knobs such as page_size=4MiB)",
    )
    p.add_argument(
        "--variables",
        help="comma-separated variables to convert (default: those with the workload's dimensions)",
    )
    p.add_argument(
        "--max-mem",
        default="1GiB",
        help="memory the conversion may use (1GiB); per worker with --executor dask or --scheduler",
    )
    p.add_argument(
        "--verify",
        choices=("full", "sample", "none"),
        default="sample",
        help="compare the target with the source (default sample)",
    )
    p.add_argument("--resume", action="store_true", help="finish an interrupted conversion")
    p.add_argument("--overwrite", action="store_true", help="replace an existing target")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--executor",
        choices=("serial", "dask"),
        default="serial",
        help="dask: a Zarr target's regions on a local dask cluster (netCDF4: serial)",
    )
    p.add_argument("--scheduler", help="address of a running dask scheduler (implies dask)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="create nothing: print the predicted size, time, peak memory and requests",
    )
    p.add_argument(
        "--no-measure",
        action="store_true",
        help="skip timing the read patterns on SOURCE and TARGET after the conversion",
    )
    p.add_argument(
        "--patterns",
        help="comma-separated read patterns timed after (default: the sweep's; "
        "with --settings: timeseries,spatial)",
    )
    _format(p)


def _results_commands(sub: Any) -> None:
    p = _command(sub, "show", "summarise a results file")
    p.add_argument("results", type=Path, help=RESULTS_HELP)
    p.add_argument("--all", action="store_true", help="also list not-applicable grid points")
    _format(p)
    p = _command(sub, "plot", "write PNG figures of a results file")
    p.add_argument("results", type=Path, help=RESULTS_HELP)
    p.add_argument("-o", "--out", type=Path, help="directory for the PNGs (default: beside it)")
    p = _command(sub, "recommend", "best settings of a results file, ready to paste")
    p.add_argument("results", type=Path, help=RESULTS_HELP)
    _objective(p)
    p.add_argument("--variable", help="variable name in the exports (default: the workload's)")
    _format(p)
    p = _command(sub, "merge", "combine results of sweeps of the same workload")
    p.add_argument("results", type=Path, nargs="+", help="results files or their directories")
    p.add_argument("-o", "--out", type=Path, required=True, help="merged results file (.nc)")
    p = _command(sub, "clean", "remove scratch, objects and locks left by runs that were killed")
    p.add_argument("out", type=Path, nargs="?", help="the run's output directory")
    p.add_argument("--scratch", type=Path, help="directory on the file system to measure")
    _storage(p, "object store whose iotune-scratch-* areas to clean, s3://bucket/prefix")


def _storage(p: argparse.ArgumentParser, help: str) -> None:
    """An object store named as a spec's storage section names it (credentials: environment)."""
    p.add_argument("--storage", metavar="URL", help=help)
    p.add_argument("--endpoint", help="the store's endpoint URL (default: the provider's)")
    p.add_argument("--region", help="the store's region")


def _other_commands(sub: Any) -> None:
    p = _command(sub, "calibrate", "measure the scratch file system's or object store's limit")
    p.add_argument("--scratch", type=Path, help="directory to measure (default .)")
    p.add_argument("--size", help="file or object size (default 1GiB; 256MiB with --storage)")
    p.add_argument("--transfer-size", help="bytes per read/write call (default 16MiB)")
    p.add_argument("--repeats", type=int, help="write+read passes (default 3; 1 with --storage)")
    _storage(p, "measure this object store instead, s3://bucket/prefix")
    p.add_argument(
        "--part-size", metavar="SIZE", help="--storage: bytes per PUT part and GET (default 8MiB)"
    )
    p.add_argument(
        "--request-concurrency",
        metavar="N,N,...",
        help="--storage: requests in flight, each level measured (default 1,2,4,8,16)",
    )
    _format(p)
    p = _command(sub, "darshan", "summarise and diagnose a Darshan log; write its sweep")
    p.add_argument("log", type=Path, help="a Darshan log (.darshan)")
    p.add_argument(
        "-o", "--out", type=Path, help="the spec to write (default sweeps/from-EXECUTABLE.yaml)"
    )
    p.add_argument(
        "--trial-size", default="4GiB", help="largest volume of one trial (default 4GiB)"
    )
    p.add_argument(
        "--all-files",
        action="store_true",
        help="also show the interpreter's and libraries' files (site-packages, /usr, ...)",
    )
    p = _command(sub, "backends", "list the format backends and what they support")
    _format(p)
    p = _command(sub, "notebook", "run a parameterised notebook with papermill")
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


def _version() -> str:
    from iotune import __version__

    return f"iotune {__version__}"


def undeprecate(argv: Sequence[str]) -> list[str]:
    """``argv`` with deprecated option spellings replaced, each warned about once."""
    command = next((a for a in argv if a in COMMANDS), None)
    out, warned = [], set()
    for arg in argv:
        option, sep, value = arg.partition("=")
        new = DEPRECATED.get((command, option)) or DEPRECATED.get((None, option))
        if new is None or not option.startswith("--"):
            out.append(arg)
            continue
        if option not in warned:
            warned.add(option)
            message = f"{option} is deprecated, use {new} (the old spelling goes in 0.3)"
            warnings.warn(message, DeprecatedOptionWarning, stacklevel=2)
        out.append(f"{new}{sep}{value}")
    return out


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The parsed arguments of ``iotune ARGV`` (old spellings replaced, with a warning)."""
    return _parser().parse_args(undeprecate(argv))


def _verbosity_of(args: argparse.Namespace) -> int:
    if getattr(args, "quiet", False):
        return -1
    return int(getattr(args, "verbose", 0) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``iotune`` console script; returns the exit code."""
    raw = list(sys.argv[1:] if argv is None else argv)
    configure(0)  # iotune's log records and warnings as "iotune: ..." lines on stderr
    with warnings.catch_warnings(record=True) as early:  # shown once -q/-v are known
        warnings.simplefilter("always", DeprecatedOptionWarning)
        args = parse_args(raw)
    configure(_verbosity_of(args))
    for caught in early:
        warnings.warn(str(caught.message), caught.category, stacklevel=1)
    try:
        return COMMANDS[args.command](args)
    except UsageError as err:
        print(f"iotune: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except IotuneError as err:
        print(f"iotune: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        sys.stderr.close()  # output piped into head: not an error
        return EXIT_OK
    except Interrupted as err:
        print(f"iotune: {err}; {_kept(args.command)}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print(f"iotune: interrupted; {_kept(args.command)}", file=sys.stderr)
        return EXIT_INTERRUPTED


def _kept(command: str) -> str:
    """What an interrupted command leaves: a calibration nothing, a sweep its finished trials."""
    if command == "calibrate":
        return "nothing was measured or cached, and its scratch files or objects are removed"
    if command == "apply":
        return "finished regions are kept in the partial target, rerun with --resume"
    return "finished trials are kept, rerun with --resume"
