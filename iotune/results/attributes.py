"""The global attributes of a results Dataset: what was measured, how, where and when.

Split from :mod:`iotune.results.dataset`, which builds the variables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from iotune.model.records import TrialResult
from iotune.runner.plan import Plan

#: the results layout this iotune writes and reads
SCHEMA_VERSION = 1


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else ""


WARMUP = (
    "one untimed write and read of the trial's size before the first timed repeat: "
    "per backend in each worker process, per MPI launch, per set of concurrent processes"
)


ORDER = {
    "auto": "interleaved where a repeat costs no launch (round-robin, seeded shuffle); "
    "launched and concurrent trials back to back",
    "interleaved": "interleaved: one repeat per task, round-robin in a seeded shuffle",
    "sequential": "back to back: each trial's repeats one after another",
}


def attributes(plan: Plan, done: Mapping[str, TrialResult], provenance: Mapping[str, str]) -> dict:
    """The Dataset's attributes: the spec, workload, measurement settings, times, provenance."""
    from iotune.measuring import precision

    sweep = plan.sweep
    starts = [r.started for r in done.values() if r.started]
    ends = [r.ended for r in done.values() if r.ended]
    attrs: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "name": sweep.name,
        "description": sweep.description,
        "spec": sweep.text,
        "spec_digest": sweep.digest(),
        "swept": " ".join(plan.dims),
        "fixed_parameters": json.dumps(
            {p.name: p.labels()[0] for p in sweep.parameters if not p.swept}
        ),
        "backends": " ".join(sweep.backends),
        "workload": json.dumps(sweep.workload.to_dict()),
        "raw_bytes": sweep.workload.nbytes,
        "repeats": sweep.measure.most,
        "repeats_mode": "auto" if sweep.measure.adaptive else "fixed",
        "interval_method": precision.METHOD,
        "warmup": WARMUP,
        "order": ORDER[sweep.measure.order],
        "order_seed": sweep.measure.seed,
        **(
            {"precision": sweep.measure.precision, "max_repeats": sweep.measure.max_repeats}
            if sweep.measure.adaptive
            else {}
        ),
        "cache": sweep.measure.cache,
        "fsync": str(sweep.measure.fsync).lower(),
        "max_cold_residency": sweep.measure.max_cold_residency,
        "executor": sweep.execution.executor,
        "cluster": _cluster_kind(sweep.execution),
        "per_host": sweep.execution.per_host,
        "contended": str(sweep.execution.contended).lower(),
        **({"baseline": json.dumps(sweep.baseline)} if sweep.baseline else {}),
        **({"compare": " ".join(sweep.compare)} if sweep.compare else {}),  # the ways weighed
        "started": _iso(min(starts)) if starts else "",
        "ended": _iso(max(ends)) if ends else "",
    }
    attrs.update({f"provenance_{k}": v for k, v in provenance.items()})
    return attrs


def _cluster_kind(execution: Any) -> str:
    """Where the trials ran: none (serial), local, scheduler, or the jobqueue kind."""
    if execution.executor != "dask":
        return "none"
    if execution.cluster:
        return str(execution.cluster["kind"])
    return "scheduler" if execution.scheduler else "local"
