"""Corrupt Darshan logs never crash iotune: a report with a valid spec, or one line and exit 2.

The logs are pydarshan's examples with random bytes flipped, ranges zeroed, the
end cut off or garbage appended (seeded, so a failure reproduces).  Before
iotune checked logs and read them in a child process, about one in five of
them ended in SIGSEGV or SIGABRT inside darshan-util.  Every log goes through
the API (``iotune.from_darshan``, then the spec through the parser); a sample
of them through ``python -m iotune darshan`` as a user runs it.
"""

from __future__ import annotations

import collections
import multiprocessing
import random
import subprocess
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from iotune.app.api import from_darshan
from iotune.core.errors import DarshanError
from iotune.specfile.parse import load_spec_text
from tests.darshan.conftest import CRASHER, EXAMPLES, flipped

ROOT = Path(__file__).resolve().parents[2]
SEED = 20261125
KINDS = ("flip", "zero", "truncate", "append")
#: how many mutated logs; every CLI_EVERY-th of them also through the CLI
LOGS, CLI_EVERY = 200, 20
#: seconds one CLI run may take: a hang fails the test instead of stalling it
CLI_TIMEOUT = 120


def mutated(data: bytes, kind: str, rng: random.Random) -> bytes:
    """``data`` with one kind of damage a copy or a full disk does to a file."""
    out = bytearray(data)
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    elif kind == "zero":
        at = rng.randrange(len(out))
        n = min(rng.randint(1, 256), len(out) - at)
        out[at : at + n] = bytes(n)
    elif kind == "truncate":
        del out[rng.randrange(len(out)) :]
    else:
        out += rng.randbytes(rng.randint(1, 4096))
    return bytes(out)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    rng = random.Random(SEED)
    sources = sorted(EXAMPLES.glob("*.darshan"))
    folder = tmp_path_factory.mktemp("fuzz")
    paths = []
    for i in range(LOGS):
        source, kind = sources[i % len(sources)], KINDS[i % len(KINDS)]
        path = folder / f"{i:03d}-{kind}-{source.stem[:12]}.darshan"
        path.write_bytes(mutated(source.read_bytes(), kind, rng))
        paths.append(path)
    crasher, flip = CRASHER
    (folder / "crasher.darshan").write_bytes(flipped(crasher, flip))
    return [*paths, folder / "crasher.darshan"]


def outcome(path: Path) -> str:
    """``report`` (its spec loads), ``no spec`` (a one-line reason) or ``error`` (one line)."""
    try:
        found = from_darshan(path)
    except DarshanError as err:
        assert "\n" not in str(err) and str(err).startswith(f"{path}: "), str(err)
        return "error"
    assert found.text()
    if found.spec is None:
        assert "\n" not in found.reason and found.reason.startswith(f"{path}: ")
        return "no spec"
    load_spec_text(found.spec_text(), source=str(path))
    return "report"


def test_every_corrupt_log_is_a_report_or_one_error(corpus: list[Path]) -> None:
    # in a new single-threaded process, so each log is read in a fork as the CLI reads
    # it (earlier tests leave threads in this one, where a fork is not safe)
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        assert pool.submit(threading.active_count).result() == 1
        outcomes = dict(zip(corpus, pool.map(outcome, corpus), strict=True))
    counts = collections.Counter(outcomes.values())
    assert sum(counts.values()) == LOGS + 1
    # the mutations leave both kinds: some logs intact enough to report, most refused
    assert counts["report"] >= 20 and counts["error"] >= 100, counts
    assert outcomes[corpus[-1]] == "error"


def cli(path: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / f"{path.stem}.yaml"
    return subprocess.run(
        [sys.executable, "-m", "iotune", "darshan", str(path), "-o", str(spec)],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        cwd=ROOT,
        check=False,
    )


def test_the_cli_exits_0_with_a_spec_or_2_with_one_line(corpus: list[Path], tmp_path: Path) -> None:
    sample = [*corpus[::CLI_EVERY], corpus[-1]]
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda p: cli(p, tmp_path), sample))
    codes = collections.Counter()
    for path, run in zip(sample, runs, strict=True):
        assert run.returncode in (0, 2), (path.name, run.returncode, run.stderr[-500:])
        assert "Traceback" not in run.stderr, (path.name, run.stderr)
        spec = tmp_path / f"{path.stem}.yaml"
        if run.returncode == 0:
            assert run.stderr == "", (path.name, run.stderr)
            load_spec_text(spec.read_text(), source=str(spec))
        else:
            lines = run.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith(f"iotune: error: {path}: "), run.stderr
            assert not spec.exists()
        codes[run.returncode] += 1
    assert codes[0] and codes[2], codes
