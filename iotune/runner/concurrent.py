"""N identical writers and readers at once, on purpose (the ``concurrency`` parameter).

Contention changes results drastically, so iotune measures it deliberately
instead of letting it leak into other trials.  The trial's process starts N
child processes (``python -m iotune.runner.concurrent``; plain subprocesses, so it
works inside daemonic dask workers too).  Each child prepares everything
outside the timed span (library import, data generation into the slab cache),
reports ready, then waits for a command on stdin; the parent releases all of
them together, as a barrier.  Each child writes its own file with the same
configuration, then, after the parent has evicted every file and verified
residency, each reads its own file back.

Aggregate throughput counts all bytes over the slowest process's time, as IOR
does; the median single-process throughput is kept beside it.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import statistics
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from iotune.backends.base import SlabBackend
from iotune.core.errors import ConcurrencyError, one_line
from iotune.core.processes import die_with_parent
from iotune.measuring import precision
from iotune.measuring.data import Field
from iotune.model.records import TrialResult, TrialTask
from iotune.runner import placed, steps

MiB = 2**20
#: generous: a child only ever waits for its own I/O or for its siblings
TIMEOUT_S = 3600.0


def run_concurrent(task: TrialTask, workdir: Path, result: TrialResult, nprocs: int) -> None:
    """Measure ``task`` with ``nprocs`` identical processes, filling ``result``.

    Raises
    ------
    ConcurrencyError
        A child failed or died; its own message is included.
    """
    children = [_start(task, workdir / f"p{k}", k) for k in range(nprocs)]
    try:
        _gather(children, "ready")
        _round(children, task, TrialResult(task.trial.id, "ok"), "warm-up")  # untimed
        for repeat in precision.repeat_indices(task.measure, result):
            _round(children, task, result, repeat)
    finally:
        for child in children:
            _stop(child)


def _round(
    children: list[subprocess.Popen], task: TrialTask, result: TrialResult, repeat: int | str
) -> None:
    """Every process writes, then (after the parent evicted them) reads its file once."""
    writes = _all(children, {"op": "write", "repeat": repeat})
    result.write.append(_combine(writes, task.workload.nbytes))
    result.file_bytes = writes[0]["file_bytes"]
    result.stored = writes[0]["stored"]
    files = [Path(f) for w in writes for f in w["files"]]
    for pattern in task.read.patterns:
        cache, fraction = steps.prepare_cache(task, files)
        reads = _all(children, {"op": "read", "repeat": repeat, "pattern": pattern})
        steps.record_dask_chunks(result, reads[0])  # every process opens the same way
        entry = _combine(reads, None)
        entry |= {"resident_fraction": fraction, "cache": cache}
        result.reads.setdefault(pattern, []).append(entry)
    _all(children, {"op": "remove", "repeat": repeat})


def _combine(runs: list[dict[str, Any]], write_bytes: int | None) -> dict[str, Any]:
    """One entry for N processes: all bytes over the slowest process's time."""
    slowest = max(r["s"] for r in runs)
    total = sum(write_bytes or r["bytes"] for r in runs)
    per = [(write_bytes or r["bytes"]) / MiB / r["s"] for r in runs]
    entry = {
        "s": slowest,
        "cpu_s": sum(r["cpu_s"] for r in runs),
        "MiBps": total / MiB / slowest,
        "per_process_MiBps": statistics.median(per),
        "processes": len(runs),
    }
    if write_bytes is None:
        ops = sum(r["ops"] for r in runs)
        entry |= {"bytes": total, "ops": ops, "ops_per_s": ops / slowest}
    return entry


def _start(task: TrialTask, workdir: Path, rank: int) -> subprocess.Popen:
    workdir.mkdir(parents=True)
    child = subprocess.Popen(
        [sys.executable, "-m", "iotune.runner.concurrent"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "IOTUNE_CONCURRENT_RANK": str(rank)},
    )
    blob = base64.b64encode(pickle.dumps((task, str(workdir)))).decode()
    _send(child, {"op": "init", "task": blob})
    return child


def _send(child: subprocess.Popen, message: dict[str, Any]) -> None:
    assert child.stdin is not None
    child.stdin.write(json.dumps(message) + "\n")
    child.stdin.flush()


def _receive(child: subprocess.Popen) -> dict[str, Any]:
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line:
        code = child.wait(timeout=TIMEOUT_S)
        raise ConcurrencyError(f"a concurrent process died (exit code {code})")
    reply = json.loads(line)
    if "error" in reply:
        raise ConcurrencyError(f"process {reply['rank']}: {reply['error']}")
    return reply


def _gather(children: list[subprocess.Popen], expect: str) -> None:
    for child in children:
        if _receive(child).get("state") != expect:
            raise ConcurrencyError(f"a concurrent process did not report {expect!r}")


def _all(children: list[subprocess.Popen], message: dict[str, Any]) -> list[dict[str, Any]]:
    # send to every child before reading any reply, so they start together
    for child in children:
        _send(child, message)
    return [_receive(child) for child in children]


def _stop(child: subprocess.Popen) -> None:
    if child.poll() is None:
        try:
            _send(child, {"op": "exit"})
            child.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            child.kill()
            child.wait()
    for stream in (child.stdin, child.stdout):
        if stream is not None:
            stream.close()


def _child(stdin: IO[str], stdout: IO[str]) -> None:
    """The loop of one concurrent process: init, then write/read/remove on command."""
    rank = int(os.environ.get("IOTUNE_CONCURRENT_RANK", "0"))
    task: TrialTask | None = None
    backend: SlabBackend | None = None
    workdir, checksums = Path(), dict[Path, int]()
    for line in stdin:
        message = json.loads(line)
        op = message["op"]
        if op == "exit":
            return
        try:
            if op == "init":
                task, workdir = pickle.loads(base64.b64decode(message["task"]))
                workdir = Path(workdir)
                made = placed.make_backend(task)
                assert isinstance(made, SlabBackend)  # launched backends never run here
                backend = made
                backend.prepare_process()
                backend.import_library()
                # fill the slab cache now, so no data is generated while others write
                for _ in Field(task.workload).slabs(steps.write_length(task, backend)):
                    pass
                reply: dict[str, Any] = {"state": "ready"}
            else:
                assert task is not None and backend is not None, "init comes first"
                reply = _child_op(task, backend, workdir, message, checksums)
        except Exception as err:  # reported to the parent, which records the trial as failed
            reply = {"error": one_line(err)}
        reply["rank"] = rank
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()


def _child_op(
    task: TrialTask,
    backend: SlabBackend,
    workdir: Path,
    message: dict[str, Any],
    checksums: dict[Path, int],
) -> dict[str, Any]:
    path = workdir / f"r{message['repeat']}{backend.suffix}"
    if message["op"] == "write":
        scratch = TrialResult(task.trial.id, "ok")
        crc = steps.write_once(task, backend, path, scratch)
        checksums[path], stored = steps.verified(task, backend, path, crc)
        files = [str(p) for p in backend.paths(path)]
        return {**scratch.write[0], "file_bytes": backend.stored_bytes(path)} | {
            "stored": stored,
            "files": files,
        }
    if message["op"] == "read":
        return steps.read_pattern(
            task, backend, path, message["pattern"], checksums[path], evict=False
        )
    if message["op"] == "remove":
        backend.remove(path)
        return {"state": "removed"}
    raise ConcurrencyError(f"unknown command {message['op']!r}")


if __name__ == "__main__":
    die_with_parent()  # a kill -9 of the worker ends its writers too
    _child(sys.stdin, sys.stdout)
