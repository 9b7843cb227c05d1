"""pydarshan in a child process, so that Darshan's C library cannot take iotune down.

darshan-util asserts and dereferences what a corrupt log tells it; a SIGSEGV
or SIGABRT there ends the process that called it, a JupyterLab kernel
included.  :func:`read_log` therefore reads in a child process and takes
back, pickled, only what iotune uses: the job's figures, the module names and
the DataFrames of the modules iotune reads.  A child that dies of a signal,
fails or runs past its time limit is one :class:`DarshanError` naming the
log, with the last line the library printed (its assertion, say).

The child is a fork where that is safe, a process of one thread such as the
CLI: it costs milliseconds, nothing being imported again.  Where threads run
(a Jupyter kernel, a dask worker) a copy could inherit a lock another thread
holds, so the child is a new interpreter, ``python -m iotune.darshan_.reader
LOG``, answering through a pipe; its imports (pydarshan, pandas) cost about
0.3 s.

The child closes the log before it answers: a library that corrupted its
own memory on the way often crashes in ``darshan_log_close``, and what it
read before then is not to be trusted either.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from iotune.core.errors import DarshanError

#: the modules iotune reads; everything else in a log (DXT, HEATMAP, ...) is ignored
MODULES = ("POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "LUSTRE")
#: seconds the child may take before it is stopped and the log reported as unreadable
TIMEOUT = 300.0
#: how :func:`read_log` may start its child
METHODS = ("auto", "fork", "spawn")


def read_log(path: Path, *, timeout: float = TIMEOUT, method: str = "auto") -> dict[str, Any]:
    """What pydarshan reads from ``path``, read in a child process.

    Parameters
    ----------
    path
        A Darshan log whose layout was checked (:func:`iotune.darshan_.layout.check_layout`).
    timeout
        Seconds before the child is killed and the log reported as unreadable.
    method
        ``fork`` (a copy of this process: nothing is imported again), ``spawn``
        (a new interpreter), or ``auto``: ``fork`` where this process runs one
        thread (the CLI), ``spawn`` where it runs more (a Jupyter kernel, a dask
        worker), since a copy of a threaded process may inherit a held lock.

    Returns
    -------
    dict
        ``nprocs``, ``exe``, ``run_time``, ``hints``, ``modules``, ``partial``,
        ``names`` and ``records`` (module to its pydarshan DataFrames).

    Raises
    ------
    DarshanError
        The library crashed, failed or hung on this log; one line naming it.
    """
    if method not in METHODS:
        raise ValueError(f"method {method!r}; allowed: {', '.join(METHODS)}")
    if method == "auto":
        method = "fork" if hasattr(os, "fork") and threading.active_count() == 1 else "spawn"
    code, out, err = (_forked if method == "fork" else _spawned)(path, timeout)
    return _answer(path, code, out, err)


def _spawned(path: Path, timeout: float) -> tuple[int, bytes, str]:
    package = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package, env.get("PYTHONPATH")) if p)
    child = subprocess.Popen(
        [sys.executable, "-m", "iotune.darshan_.reader", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        import pandas  # noqa: F401  (unpickling needs it: imported while the child reads)

        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise _too_long(path, timeout) from exc
    finally:
        if child.poll() is None:  # timed out, or interrupted (Ctrl-C): leave no reader behind
            child.kill()
            child.communicate()
    return child.returncode, out, err.decode("utf-8", "replace")


def _forked(path: Path, timeout: float) -> tuple[int, bytes, str]:
    import darshan  # noqa: F401  (imported before the fork, so the copy has it)

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:
            _child(str(path), out.fileno(), err.fileno())  # never returns
        status = None
        try:
            status = _wait(pid, time.monotonic() + timeout)
        finally:
            if status is None:  # timed out, or interrupted: leave no reader behind
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        if status is None:
            raise _too_long(path, timeout)
        out.seek(0)
        err.seek(0)
        return status, out.read(), err.read().decode("utf-8", "replace")


def _wait(pid: int, deadline: float) -> int | None:
    """The child's exit code (negative: its signal); None once ``deadline`` passed."""
    pause = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _too_long(path: Path, timeout: float) -> DarshanError:
    return DarshanError(
        f"{path}: pydarshan did not finish reading this log within {timeout:g} s "
        "(stopped; the log may be corrupt)"
    )


def _child(path: str, out: int, err: int) -> None:
    """A forked child's work: the library's output to ``err``, the answer to ``out``."""
    code = 3
    try:
        import faulthandler

        from iotune.core.processes import die_with_parent

        faulthandler.disable()  # a crash here is reported by the parent, in one line
        die_with_parent()
        os.dup2(err, 2)
        os.dup2(err, 1)
        with os.fdopen(os.dup(out), "wb") as pipe:
            pickle.dump(_answer_of(path), pipe, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0
    finally:
        # never back into the parent's code; and the parent's buffered output is its own
        os._exit(code)


def _answer(path: Path, code: int, out: bytes, err: str) -> dict[str, Any]:
    said = _last_line(err)
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
        raise DarshanError(
            f"{path}: corrupt Darshan log: Darshan's C library crashed reading it "
            f"({name}{': ' + said if said else ''})"
        )
    try:
        answer = pickle.loads(out) if code == 0 else None
    except (pickle.UnpicklingError, EOFError, ValueError) as exc:
        raise DarshanError(f"{path}: the Darshan reader's answer was cut short ({said})") from exc
    if not isinstance(answer, dict):
        said = said or "no message"
        raise DarshanError(f"{path}: the Darshan reader failed (exit {code}: {said})")
    if "error" in answer:
        reason = answer["error"] + (f" ({said})" if said and said not in answer["error"] else "")
        raise DarshanError(f"{path}: pydarshan cannot read this log: {reason}")
    return answer


def _last_line(text: str) -> str:
    """The library's last word, without the program name and the build's directories."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    line = re.sub(r"^\S*python[\d.]*: ", "", lines[-1])
    line = re.sub(r"(?:/[^\s:/]+)+/([\w.-]+\.c)", r"\1", line)
    return line[:300]


def _read(path: str) -> dict[str, Any]:
    """The child's work: read the log with pydarshan, close it, return plain data."""
    import darshan

    report = darshan.DarshanReport(path, read_all=False)
    records, partial = {}, []
    for module in MODULES:
        if module not in report.modules:
            continue
        if module == "LUSTRE":
            report.mod_read_all_lustre_records(warnings=False)
        else:
            report.mod_read_all_records(module, warnings=False)
        if module in report.records and len(report.records[module]):
            records[module] = report.records[module].to_df()
        if report.modules[module].get("partial_flag"):
            partial.append(module)
    job = report.metadata.get("job", {})
    answer = {
        "nprocs": int(job.get("nprocs", 1)),
        "exe": str(report.metadata.get("exe", "")),
        "run_time": float(job.get("run_time", 0.0)),
        "hints": str(job.get("metadata", {}).get("h", "")),
        "modules": tuple(report.modules),
        "partial": tuple(partial),
        "names": dict(report.name_records),
        "records": records,
    }
    report._cleanup()  # close now: a crash here must come before the answer, not after it
    return answer


def _answer_of(path: str) -> dict[str, Any]:
    try:
        return _read(path)
    except Exception as err:  # pydarshan's failures come as many types
        return {"error": " ".join(str(err).split()) or type(err).__name__}


def main(argv: list[str]) -> None:
    """The child: pickle :func:`_read`'s answer (or ``{"error": ...}``) to the parent's pipe."""
    from iotune.core.processes import die_with_parent

    die_with_parent()
    # the library and pydarshan may print; only the pickle goes to the parent's pipe
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    answer = _answer_of(argv[0])
    with os.fdopen(answer_fd, "wb") as pipe:
        pickle.dump(answer, pipe, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.flush()
    sys.stderr.flush()
    # the answer is complete and the log closed: skip the interpreter's teardown of the
    # library's objects, which has nothing left to say
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
