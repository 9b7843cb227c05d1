"""A throwaway single-node SLURM for the tests: munged, slurmctld and slurmd in a temp dir.

Nothing under ``/etc`` or ``/run`` is read or written: the munge key, socket,
logs, pid files, spool and state directories and ``slurm.conf`` all live in
the directory given to :func:`start`, and the SLURM commands find the
configuration through ``SLURM_CONF`` in :attr:`LocalSlurm.env`.  The daemons
listen on free ports, so a SLURM installed on the machine is left alone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: every program the cluster needs; a missing one makes the tests skip (or fail in CI)
PROGRAMS = (
    "munged",
    "mungekey",
    "slurmctld",
    "slurmd",
    "scontrol",
    "sinfo",
    "sbatch",
    "squeue",
    "scancel",
)
PARTITION = "debug"


class SlurmUnavailable(RuntimeError):
    """This machine cannot run the local SLURM (not root, or programs missing)."""


class SlurmStartError(RuntimeError):
    """The daemons were started but the node never became idle."""


@dataclass
class LocalSlurm:
    """A running single-node SLURM.

    Attributes
    ----------
    root
        Directory holding its configuration, state and logs.
    env
        Environment for anything that talks to it (``SLURM_CONF`` set).
    node
        The node's name (this host's short name).
    cpus, memory_mib
        What the node offers to jobs.
    """

    root: Path
    env: dict[str, str]
    node: str
    cpus: int
    memory_mib: int
    daemons: list[subprocess.Popen] = field(default_factory=list)

    def command(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
        """Run a SLURM client command (``sinfo``, ``squeue``, ...) against this cluster."""
        return subprocess.run(
            list(args), env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def node_state(self) -> str:
        """The node's state as ``sinfo`` reports it (``idle``, ``down*``, ...); '' if none."""
        done = self.command("sinfo", "--noheader", "--Node", "--format=%T")
        return done.stdout.strip() if done.returncode == 0 else ""

    def job_ids(self) -> list[str]:
        """Ids of the jobs the controller still knows of (pending, running or completing)."""
        done = self.command("squeue", "--noheader", "--format=%i")
        return done.stdout.split() if done.returncode == 0 else []

    def logs(self, lines: int = 25) -> str:
        """The tails of the daemons' log files, for failure messages."""
        parts = []
        for name in ("munged.log", "slurmctld.log", "slurmd.log"):
            path = self.root / "log" / name
            text = path.read_text(errors="replace").splitlines() if path.exists() else []
            parts.append(f"--- {name} ---\n" + "\n".join(text[-lines:]))
        return "\n".join(parts)

    def stop(self, timeout: float = 30) -> None:
        """Cancel every job, wait for the jobs' processes to end, then stop the daemons."""
        if len(self.daemons) > 1 and self.daemons[1].poll() is None:  # the controller runs
            self.command("scancel", f"--partition={PARTITION}")
            deadline = time.monotonic() + timeout
            while self.job_ids() and time.monotonic() < deadline:
                time.sleep(0.5)
        if len(self.daemons) > 1 and self.daemons[1].poll() is None:
            # an orderly stop of slurmctld, its slurmscriptd and slurmd; on SIGTERM
            # slurmctld 22.05 in the foreground hangs after saving its state
            self.command("scontrol", "shutdown")
        for daemon in self.daemons[1:]:
            _end(daemon, grace=10)
        if self.daemons:
            _end(self.daemons[0], grace=0)  # munged last: the others need it to the end
        self._kill_leftovers()

    def _kill_leftovers(self) -> None:
        """SIGKILL what stopped daemons left: step daemons, job processes, slurmscriptd.

        They are not our children, so they are found by the configuration they
        inherited, which no other process on the machine carries.
        """
        for pid in _pids_with_env("SLURM_CONF", self.env["SLURM_CONF"]):
            _kill(pid)


def check_prerequisites() -> None:
    """Raise :class:`SlurmUnavailable` naming what this machine lacks."""
    if os.geteuid() != 0:
        raise SlurmUnavailable("starting slurmctld/slurmd needs root")
    missing = [p for p in PROGRAMS if shutil.which(p) is None]
    if missing:
        raise SlurmUnavailable(
            f"{', '.join(missing)} not installed (apt-get install slurm-wlm munge)"
        )


def start(root: Path, *, timeout: float = 60) -> LocalSlurm:
    """Start munged, slurmctld and slurmd under ``root`` and wait until the node is idle.

    Parameters
    ----------
    root
        An empty directory; everything the cluster writes goes below it.
    timeout
        Seconds to wait for the node to become idle.

    Returns
    -------
    LocalSlurm
        The running cluster; call :meth:`LocalSlurm.stop` when done.

    Raises
    ------
    SlurmUnavailable
        Not root, or a program is missing.
    SlurmStartError
        A daemon exited or the node did not become idle in time (the message
        holds the daemons' logs).
    """
    check_prerequisites()
    for sub in ("munge", "log", "run", "state", "spool"):
        (root / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
    node = socket.gethostname().split(".")[0]
    cpus = os.cpu_count() or 1
    memory_mib = _memory_mib() * 9 // 10  # slurmd drains a node that reports less than this
    conf = root / "slurm.conf"
    env = {**os.environ, "SLURM_CONF": str(conf)}
    for key in [k for k in env if k.startswith(("SLURM_", "SBATCH_", "SQUEUE_"))]:
        if key != "SLURM_CONF":  # an outer allocation's settings would leak into ours
            del env[key]
    slurm = LocalSlurm(root=root, env=env, node=node, cpus=cpus, memory_mib=memory_mib)
    try:
        socket_path = _start_munge(root, slurm)
        conf.write_text(_slurm_conf(root, node, cpus, memory_mib, socket_path))
        (root / "plugstack.conf").write_text("")  # not the system's /etc/slurm one
        _spawn(slurm, ["slurmctld", "-D", "-i", "-f", str(conf)], root / "log/slurmctld.out")
        _spawn(slurm, ["slurmd", "-D", "-f", str(conf)], root / "log/slurmd.out")
        _wait_idle(slurm, timeout)
    except BaseException:
        slurm.stop()
        raise
    return slurm


def _start_munge(root: Path, slurm: LocalSlurm) -> Path:
    key, sock = root / "munge/munge.key", root / "munge/munge.socket"
    subprocess.run(
        ["mungekey", "--create", "--force", f"--keyfile={key}"],
        check=True,
        capture_output=True,
    )
    key.chmod(0o600)
    _spawn(
        slurm,
        [
            "munged",
            "--foreground",
            "--force",  # as root, and in a temp dir munged would otherwise refuse
            f"--key-file={key}",
            f"--socket={sock}",
            f"--pid-file={root / 'run/munged.pid'}",
            f"--log-file={root / 'log/munged.log'}",
            f"--seed-file={root / 'munge/munged.seed'}",
        ],
        root / "log/munged.out",
    )
    deadline = time.monotonic() + 10
    while not sock.exists():
        if slurm.daemons[-1].poll() is not None or time.monotonic() > deadline:
            raise SlurmStartError(f"munged did not start\n{slurm.logs()}")
        time.sleep(0.05)
    return sock


def _slurm_conf(root: Path, node: str, cpus: int, memory_mib: int, munge_socket: Path) -> str:
    # daemons and clients meet on 127.0.0.1: the host name need not resolve (CI containers)
    ctld_port, slurmd_port = _free_port(), _free_port()
    return f"""\
ClusterName=iotune-test
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
StateSaveLocation={root / "state"}
SlurmdSpoolDir={root / "spool"}
SlurmctldPidFile={root / "run/slurmctld.pid"}
SlurmdPidFile={root / "run/slurmd.pid"}
SlurmctldLogFile={root / "log/slurmctld.log"}
SlurmdLogFile={root / "log/slurmd.log"}
PlugStackConfig={root / "plugstack.conf"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/builtin
ReturnToService=2
MailProg=/bin/true
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mib} State=UNKNOWN
PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def _spawn(slurm: LocalSlurm, argv: Sequence[str], output: Path) -> None:
    with output.open("ab") as out:
        slurm.daemons.append(
            subprocess.Popen(
                list(argv), env=slurm.env, stdout=out, stderr=subprocess.STDOUT, cwd=slurm.root
            )
        )


def _wait_idle(slurm: LocalSlurm, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    state = ""
    while time.monotonic() < deadline:
        dead = [d.args[0] for d in slurm.daemons if d.poll() is not None]
        if dead:
            raise SlurmStartError(f"{', '.join(dead)} exited\n{slurm.logs()}")
        state = slurm.node_state()
        if state == "idle":
            return
        time.sleep(0.25)
    raise SlurmStartError(
        f"node {slurm.node} not idle after {timeout:.0f} s (state {state!r})\n{slurm.logs()}"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _memory_mib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise SlurmStartError("no MemTotal in /proc/meminfo")


def _pids_with_env(key: str, value: str) -> list[int]:
    marker = f"{key}={value}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue  # gone, or not ours to read
        if marker in environ.split(b"\0"):
            found.append(int(proc.name))
    return found


def _end(daemon: subprocess.Popen, grace: float) -> None:
    """Wait ``grace`` seconds for ``daemon`` to exit, then SIGTERM it, then SIGKILL it."""
    for stop in (None, daemon.terminate, daemon.kill):
        if daemon.poll() is not None:
            return
        if stop is not None:
            stop()
        try:
            daemon.wait(timeout=grace if stop is None else 5)
        except subprocess.TimeoutExpired:
            continue
    daemon.wait()


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
        os.kill(pid, signal.SIGKILL)
