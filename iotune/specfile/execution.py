"""The ``execution`` section of a sweep spec: where and how trials run.

It is not part of the sweep's digest, so a run may resume on another executor
or cluster.  The cluster settings are dask-jobqueue's, validated here so a typo
fails before any job is submitted.
"""

from __future__ import annotations

from typing import Any

from iotune.core.plugins import EXECUTORS, executor_names
from iotune.model.checks import choice, fail, integer, mapping, positive_size, section
from iotune.model.spec import ExecutionSpec

CLUSTER_KINDS = ("slurm", "pbs")
CLUSTER_KEYS = (
    "kind",
    "jobs",
    "cores",
    "processes",
    "memory",
    "walltime",
    "queue",
    "account",
    "job_extra_directives",
    "local_directory",
    "log_directory",
    "python",
    "interface",
    "job_script_prologue",
)


def parse_execution(value: object) -> ExecutionSpec:
    """Validate the ``execution`` section (absent: serial).

    Raises
    ------
    SpecError
        Naming the field, the bad value and what is allowed.
    """
    keys = ("executor", "workers", "scheduler", "per_host", "cluster", "launcher")
    data = mapping(section(value), "execution", keys)
    executor = data.get("executor", "serial")
    if executor not in EXECUTORS:  # a plugin's, or a typo: only then read the metadata
        executor = choice(executor, "execution.executor", executor_names())
    if executor == "serial":
        for key in ("workers", "scheduler", "per_host", "cluster"):
            if key in data:
                raise fail(f"execution.{key}", "only used with executor: dask")
    workers = data.get("workers")
    scheduler = data.get("scheduler")
    if scheduler is not None and (not isinstance(scheduler, str) or "://" not in scheduler):
        raise fail("execution.scheduler", f"{scheduler!r} is not an address like tcp://host:8786")
    return ExecutionSpec(
        executor=executor,
        workers=None if workers is None else integer(workers, "execution.workers", minimum=1),
        scheduler=scheduler,
        per_host=integer(data.get("per_host", 1), "execution.per_host", minimum=1),
        cluster=_parse_cluster(data.get("cluster")),
        launcher=_parse_launcher(data.get("launcher")),
    )


def _parse_launcher(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or "{nprocs}" not in value:
        raise fail(
            "execution.launcher",
            f"{value!r} must be a command with {{nprocs}}, e.g. 'srun -n {{nprocs}}'",
        )
    return value


def _parse_cluster(value: object) -> dict[str, Any] | None:
    """Validate ``execution.cluster``: the dask-jobqueue settings, ``memory`` as bytes."""
    if value is None:
        return None
    data = dict(mapping(value, "execution.cluster", CLUSTER_KEYS))
    data["kind"] = choice(data.get("kind"), "execution.cluster.kind", CLUSTER_KINDS)
    for key in ("jobs", "cores", "processes"):
        if key in data:
            data[key] = integer(data[key], f"execution.cluster.{key}", minimum=1)
    if "memory" in data:
        data["memory"] = positive_size(data["memory"], "execution.cluster.memory")
    if "walltime" in data:
        data["walltime"] = _walltime(data["walltime"], "execution.cluster.walltime")
    for key in ("queue", "account", "interface", "python", "local_directory", "log_directory"):
        text = data.get(key, "-")
        if not isinstance(text, str) or not text:
            raise fail(f"execution.cluster.{key}", f"expected a non-empty string, got {text!r}")
    for key in ("job_extra_directives", "job_script_prologue"):
        lines = data.get(key, [])
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            raise fail(f"execution.cluster.{key}", f"expected a list of strings, got {lines!r}")
    return data


def _walltime(value: object, path: str) -> str:
    """A job time limit as SLURM and PBS read it: ``[D-]HH:MM:SS``, ``MM:SS`` or minutes."""
    allowed = "allowed: a quoted string like '01:30:00', '2-00:00:00' or '45' (minutes)"
    if isinstance(value, int) and not isinstance(value, bool):
        # YAML 1.1 reads an unquoted 12:00:00 as the integer 43200 (base 60), and a
        # scheduler would read 43200 as minutes: refuse rather than guess
        raise fail(path, f"{value!r} is a number (unquoted HH:MM:SS reads as seconds); {allowed}")
    days, _, clock = value.rpartition("-") if isinstance(value, str) else ("", "", "")
    parts = clock.split(":")
    if (
        not isinstance(value, str)
        or not (days == "" or days.isdigit())
        or len(parts) > 3
        or not all(p.isdigit() for p in parts)
    ):
        raise fail(path, f"{value!r} is not a wall time; {allowed}")
    return value
