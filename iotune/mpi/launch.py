"""MPI trials: the launch command, the layout arithmetic and the data every rank writes.

The parent never imports mpi4py: it writes a job description, starts
``{launcher} python -m iotune.mpi.rank JOB`` and reads the report
rank 0 leaves behind.  The arithmetic here (which bytes a rank writes where,
how a global array is cut into blocks) is shared by the ranks and by the
tests.

Data is the workload's own byte stream (the C-order bytes of its field,
repeated when more bytes are written than the workload holds), placed at
the position it would have in the shared file.  So the expected content of
any file follows from the stream alone, and a file can be checked without
trusting the offsets the ranks computed.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.core.errors import MpiError, NotApplicable, UsageError, VerificationError
from iotune.core.processes import with_parent
from iotune.measuring.data import Field
from iotune.model.spec import Workload

if TYPE_CHECKING:
    from iotune.model.records import TrialResult, TrialTask

MiB = 2**20
DEFAULT_LAUNCHER = "mpiexec -n {nprocs}"
#: the MPI-IO hints ROMIO's Lustre driver stripes a new file from
STRIPE_HINTS = {"stripe_count": "striping_factor", "stripe_size": "striping_unit"}
#: generous: a launch runs every repeat of a trial
TIMEOUT_S = 3600.0


def find_mpiexec() -> str | None:
    """The mpiexec beside this Python (the ``mpich`` wheel's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def launcher_command(template: str | None, nprocs: int) -> list[str]:
    """The launcher's argument list for ``nprocs`` ranks.

    ``None`` means ``mpiexec -n {nprocs}`` with the mpiexec of
    :func:`find_mpiexec`, so a plain ``pip install`` works without a system MPI.

    Raises
    ------
    UsageError
        No launcher is configured and no mpiexec is found.
    """
    if template is None:
        mpiexec = find_mpiexec()
        if mpiexec is None:
            raise UsageError(
                "no MPI launcher: mpiexec is neither beside Python nor on PATH; "
                "install the mpich wheel or set execution.launcher"
            )
        return [mpiexec, "-n", str(nprocs)]
    return [part.replace("{nprocs}", str(nprocs)) for part in shlex.split(template)]


def _factors(n: int) -> list[int]:
    out, d = [], 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n //= d
        d += 1
    return [*out, n] if n > 1 else out


def decompose(nprocs: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Ranks per dimension for a block decomposition of ``shape``, as balanced as possible.

    Like ``MPI_Dims_create`` but aware of the extents: each prime factor of
    ``nprocs`` (largest first) goes to the dimension with the most elements
    per rank that it still divides into non-empty blocks.

    Raises
    ------
    ValueError
        ``nprocs`` ranks cannot each get a non-empty block.
    """
    dims = [1] * len(shape)
    for p in sorted(_factors(nprocs), reverse=True):
        fits = [i for i in range(len(shape)) if dims[i] * p <= shape[i]]
        if not fits:
            raise ValueError(f"{nprocs} ranks cannot each get a block of an array of shape {shape}")
        best = max(fits, key=lambda i: (shape[i] / dims[i], -i))
        dims[best] *= p
    return tuple(dims)


def block_of(rank: int, dims: tuple[int, ...], shape: tuple[int, ...]) -> tuple[tuple, tuple]:
    """``(starts, subsizes)`` of ``rank``'s block; ranks are numbered in C order over ``dims``."""
    coords = [int(c) for c in np.unravel_index(rank, dims)]
    starts, sizes = [], []
    for c, d, n in zip(coords, dims, shape, strict=True):
        base, extra = divmod(n, d)
        starts.append(int(c * base + min(c, extra)))
        sizes.append(int(base + (1 if c < extra else 0)))
    return tuple(starts), tuple(sizes)


def pieces(rank: int, params: dict[str, Any]) -> list[tuple[int, int]]:
    """``(position, length)`` of each transfer of ``rank`` in the shared-file byte stream.

    ``contiguous``: one block of ``bytes_per_rank`` at ``rank * bytes_per_rank`` (IOR
    ``-b B -t T``).  ``strided``: ``bytes_per_rank / transfer_size`` segments of
    ``transfer_size``, ranks interleaved (IOR ``-b T -t T -s B/T``).
    """
    n, b, t = int(params["nprocs"]), int(params["bytes_per_rank"]), int(params["transfer_size"])
    if params["access"] == "strided":
        return [((s * n + rank) * t, t) for s in range(b // t)]
    return [(rank * b + k * t, t) for k in range(b // t)]


def stream(
    workload: Workload, start: int, length: int, *, field: Field | None = None
) -> np.ndarray:
    """Bytes ``[start, start + length)`` of the workload's repeated C-order byte stream.

    Pass ``field`` to reuse one :class:`~iotune.measuring.data.Field` across calls.
    """
    field, total = field or Field(workload), workload.nbytes
    plane = total // workload.shape[0]
    out = np.empty(length, np.uint8)
    done = 0
    while done < length:
        pos = (start + done) % total
        t, offset = divmod(pos, plane)
        data = np.ascontiguousarray(field.cached_slab(t, t + 1)).view(np.uint8).reshape(-1)
        n = min(plane - offset, length - done)
        out[done : done + n] = data[offset : offset + n]
        done += n
    return out


def total_bytes(params: dict[str, Any], workload: Workload) -> int:
    """Bytes all ranks move together."""
    if params["access"] == "block3d":
        return workload.nbytes
    return int(params["nprocs"]) * int(params["bytes_per_rank"])


def expected_files(params: dict[str, Any], workload: Workload) -> list[tuple[str, int, int]]:
    """``(file name, stream start, length)`` of every file a trial writes."""
    if params["layout"] == "fpp":
        b = int(params["bytes_per_rank"])
        return [(f"p{r}.dat", r * b, b) for r in range(int(params["nprocs"]))]
    return [("shared.dat", 0, total_bytes(params, workload))]


def launch(
    job: dict[str, Any],
    workdir: Path,
    *,
    launcher: str | None,
    program: str = "iotune.mpi.rank",
) -> dict[str, Any]:
    """Run the rank program (a module run with ``python -m``) on ``job``; return rank 0's report.

    Raises
    ------
    MpiError
        The launcher failed or a rank reported an error.
    """
    jobfile, report = workdir / "job.json", workdir / "report.json"
    report.unlink(missing_ok=True)  # an earlier launch's must not pass for this one's
    job = {**job, "report": str(report)}
    jobfile.write_text(json.dumps(job))
    argv = launcher_command(launcher, int(job["params"]["nprocs"]))
    if shutil.which(argv[0]) is None:  # said before setpriv would say it less clearly
        raise UsageError(f"cannot start the MPI launcher {argv[0]!r}: not found")
    command = [
        *with_parent(argv),
        sys.executable,
        "-m",
        program,
        str(jobfile),
    ]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError as err:
        raise UsageError(f"cannot start the MPI launcher {command[0]!r}: {err.strerror}") from err
    except subprocess.TimeoutExpired as err:
        raise MpiError(f"the MPI trial did not finish in {TIMEOUT_S:.0f} s") from err
    errors = sorted(workdir.glob("report.json.rank*.error"))
    if errors:
        raise MpiError(errors[0].read_text().strip())
    if done.returncode != 0 or not report.exists():
        tail = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        shown = f"{shlex.join(argv)} python -m {program}"
        raise MpiError(f"{shown} ... exited with {done.returncode}: {tail}")
    return json.loads(report.read_text())


def check_stripe_hints(params: Mapping[str, Any], hint_values: Mapping[str, str]) -> None:
    """Refuse a hint set that stripes the file while ``stripe_count``/``stripe_size`` do too.

    Raises
    ------
    NotApplicable
        Both ask for the same striping setting.
    """
    for param, hint in STRIPE_HINTS.items():
        if params.get(param) is not None and hint in hint_values:
            raise NotApplicable(f"hint set {params['hints']!r} sets {hint} and so does {param}")


#: parameters that set one MPI-IO hint each (H5Tuner's typed hints) -> the hint's key
TYPED_HINTS = {
    "cb_nodes": "cb_nodes",
    "cb_buffer_size": "cb_buffer_size",
    "stripe_count_hint": "striping_factor",
    "stripe_size_hint": "striping_unit",
}


def merge_typed_hints(
    params: Mapping[str, Any], hint_values: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The typed hint parameters a trial sets, and its hint set with them merged in.

    Raises
    ------
    NotApplicable
        The trial's hint set sets the same hint.
    """
    typed = {k: params[k] for k in TYPED_HINTS if params.get(k) is not None}
    clash = [k for k in typed if TYPED_HINTS[k] in hint_values]
    if clash:
        raise NotApplicable(
            f"hint set {params.get('hints')!r} sets {TYPED_HINTS[clash[0]]} "
            f"and so does the parameter {clash[0]}"
        )
    return typed, {**hint_values, **{TYPED_HINTS[k]: str(v) for k, v in typed.items()}}


def striped_directory(
    data: Path, params: Mapping[str, Any], hints: dict[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Create the trial's data directory, striped on Lustre; return the stripe info and hints.

    On Lustre the hints gain ``striping_factor``/``striping_unit``, from which
    ROMIO's Lustre driver stripes new files too.
    """
    from iotune.mpi import lustre

    stripe = lustre.prepare(data, count=params.get("stripe_count"), size=params.get("stripe_size"))
    if stripe["applied"]:
        # -1 (all OSTs) and 0 (default) exist only for lfs; the directory carries them
        requested = {k: v for k, v in stripe["requested"].items() if v > 0}
        hints = hints | {STRIPE_HINTS[k]: str(v) for k, v in requested.items()}
    return stripe, hints


def launch_trial(
    task: TrialTask,
    workdir: Path,
    data: Path,
    *,
    hints: dict[str, str],
    stripe: dict[str, Any],
    program: str,
) -> dict[str, Any]:
    """Launch ``program``'s ranks for every repeat of ``task``, writing under ``data``.

    Returns
    -------
    dict
        Rank 0's report: ``ranks``, ``library`` and one entry per repeat.

    Raises
    ------
    UsageError
        The trial asks for ``concurrency`` (ranks are the concurrency here).
    MpiError
        The launcher or a rank failed.
    """
    params = task.trial.params
    if int(params.get("concurrency", 1)) > 1:
        raise UsageError(
            f"concurrency does not apply to {task.trial.backend} with ranks; sweep nprocs"
        )
    job = {
        "params": params,
        "workload": dataclasses.asdict(task.workload),
        "measure": dataclasses.asdict(task.measure),
        "dir": str(data),
        "hints": hints,
        "striped": stripe["applied"],
    }
    return launch(job, workdir, launcher=task.launcher, program=program)


def fill_result(result: TrialResult, report: dict[str, Any], *, total: int, ops: int) -> None:
    """Aggregate per-rank timings: the slowest rank's time, all ``total`` bytes over it.

    Raises
    ------
    VerificationError
        A repeat's read-back check failed.
    """
    result.raw_bytes = total
    for rep in report["repeats"]:
        bad = [r for r, ok in enumerate(rep["crc_ok"]) if not ok]
        if bad:
            raise VerificationError(
                f"rank(s) {', '.join(map(str, bad))} read back other bytes than they wrote (crc32c)"
            )
        if rep["check"]:
            raise VerificationError(rep["check"])  # says how the file was read back
        slow, fast = max(rep["write_s"]), min(rep["write_s"])
        result.write.append(
            {"s": slow, "cpu_s": sum(rep["write_cpu_s"]), "MiBps": total / MiB / slow}
            | {"s_fastest_rank": fast}
        )
        slow, fast = max(rep["read_s"]), min(rep["read_s"])
        entry = {"s": slow, "cpu_s": sum(rep["read_cpu_s"]), "bytes": total, "ops": ops}
        entry |= {"MiBps": total / MiB / slow, "ops_per_s": ops / slow, "s_fastest_rank": fast}
        entry |= {"resident_fraction": rep["resident_fraction"], "cache": rep["cache"]}
        result.reads.setdefault("full", []).append(entry)
    result.file_bytes = report["repeats"][0]["file_bytes"]


def stored_info(
    report: dict[str, Any],
    *,
    task: TrialTask,
    hints: dict[str, str],
    stripe: dict[str, Any],
) -> dict[str, Any]:
    """What a launched trial keeps beside its timings: the MPI library, hints and striping."""
    first = report["repeats"][0]
    return {
        "ranks": report["ranks"],
        "mpi_library": report["library"],
        "launcher": task.launcher or DEFAULT_LAUNCHER,
        "hints_requested": hints,
        "hints_effective": first["hints"],
        "hints_ignored": {
            k: {"requested": v, "effective": first["hints"].get(k)}
            for k, v in hints.items()
            if first["hints"].get(k) != v
        },
        "stripe": {**stripe, "layout": first["layout"]},
    }
