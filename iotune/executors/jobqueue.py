"""dask-jobqueue clusters for the dask executor (``execution.cluster``): options, a checked script.

The worker thread limits are exported in each job's script (the client's dask
config does not reach a worker the batch system starts), and a SLURM job script
is shown to ``sbatch --test-only`` before any job is submitted.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from typing import Any

from iotune.core.errors import UsageError
from iotune.core.extras import require
from iotune.executors.environ import WORKER_ENVIRON


def jobqueue_options(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The dask-jobqueue cluster's keyword arguments for an ``execution.cluster`` mapping.

    Parameters
    ----------
    spec
        The validated ``execution.cluster`` (``memory`` in bytes).

    Returns
    -------
    dict
        Everything but ``kind`` and ``jobs``.  ``job_script_prologue`` (the
        spec's, else the one in the jobqueue config) is preceded by exports of
        the worker thread limits: the client's dask config does not reach a
        worker the batch system starts.  Unset options keep dask-jobqueue's
        defaults, e.g. ``python`` is this interpreter (``sys.executable``).
    """
    import dask

    options = {k: v for k, v in spec.items() if k not in ("kind", "jobs") and v is not None}
    prologue = options.get("job_script_prologue")
    if prologue is None:
        prologue = dask.config.get(f"jobqueue.{spec['kind']}.job-script-prologue", None) or []
    # ${VAR:-1}: a value the user exported for the job wins, as with LocalCluster workers
    limits = [f"export {k}=${{{k}:-{v}}}" for k, v in WORKER_ENVIRON.items()]
    options["job_script_prologue"] = [*limits, *prologue]
    return options


def jobqueue_cluster(spec: Mapping[str, Any]) -> Any:
    """A dask-jobqueue cluster of ``execution.cluster``, scaled to its ``jobs``.

    Raises
    ------
    UsageError
        Options the cluster refuses, or a job script SLURM would not take.
    """
    require("dask_jobqueue", extra="jobqueue", feature="execution.cluster")
    import dask_jobqueue

    kinds = {"slurm": dask_jobqueue.SLURMCluster, "pbs": dask_jobqueue.PBSCluster}
    try:
        cluster = kinds[spec["kind"]](**jobqueue_options(spec))
    except ValueError as err:  # e.g. no cores or memory in the spec nor the jobqueue config
        raise UsageError(f"execution.cluster: {' '.join(str(err).split())}") from err
    try:
        if spec["kind"] == "slurm":
            check_job_script(cluster.job_script())
    except UsageError:
        cluster.close()
        raise
    cluster.scale(jobs=spec.get("jobs") or 1)
    return cluster


def check_job_script(script: str, *, sbatch: str = "sbatch") -> None:
    """Ask SLURM whether it would take ``script`` (``sbatch --test-only``), submitting nothing.

    dask-jobqueue submits from a background task and only logs a refusal, so a
    wrong partition or account would otherwise show as workers that never come.

    Raises
    ------
    UsageError
        sbatch is missing or refuses the script, with sbatch's own reason.
    """
    with tempfile.NamedTemporaryFile("w", suffix=".sh", prefix="iotune-job-") as handle:
        handle.write(script)
        handle.flush()
        try:
            proc = subprocess.run(
                [sbatch, "--test-only", handle.name], capture_output=True, text=True, timeout=60
            )
        except FileNotFoundError as err:
            raise UsageError(
                f"execution.cluster: kind 'slurm' needs {sbatch!r} on PATH; it was not found"
            ) from err
        except subprocess.TimeoutExpired as err:
            raise UsageError(
                "execution.cluster: 'sbatch --test-only' got no answer from SLURM in 60 s"
            ) from err
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        reason = lines[-1] if lines else f"exit code {proc.returncode}"
        raise UsageError(f"execution.cluster: SLURM refuses the job script: {reason}")
