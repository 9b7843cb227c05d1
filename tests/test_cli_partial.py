"""A run stopped between interleaved rounds, then shown, recommended and resumed (issue 41).

A point with fewer repeats than the spec asks for is ``partial``, not ``ok``: flagged
in ``show``, without an interval, left out of the ranking while complete points exist;
``--resume`` measures the missing repeats and turns it ``ok``.  The progress bar of a
resumed run counts the plan's trials, never more.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import iotune

pytestmark = pytest.mark.slow

# five trials of the memory backend, a few milliseconds each; three interleaved repeats
MEMORY = {
    "version": 1,
    "name": "partial",
    "workload": {"shape": {"time": 8, "y": 32, "x": 32}, "dtype": "int16"},
    "backend": "memory",
    "parameters": {"codec": ["none", "zlib", "bzip2"], "level": [1, 9]},
    "read": {"patterns": ["full"]},
    "measure": {"repeats": 3, "cache": "warm", "fsync": False, "order": "interleaved"},
}


def cli(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=300)


def keep_round_zero(journal: Path) -> int:
    """The journal as a run stopped after its first round left it: header, repeat 0, probes."""
    lines = journal.read_text().splitlines()
    kept = [lines[0]]
    for line in lines[1:]:
        record = json.loads(line)
        if record.get("part") == 0 or "probe" in record:
            kept.append(line)
    journal.write_text("\n".join(kept) + "\n")
    return sum("part" in json.loads(x) for x in kept[1:])


@pytest.fixture
def stopped(tmp_path: Path) -> tuple[Path, Path]:
    """A run whose first trial to complete stopped it: that one ok, the others 2 of 3."""
    spec, out = tmp_path / "s.yaml", tmp_path / "out"
    spec.write_text(yaml.safe_dump(MEMORY))
    iotune.run(spec, out=out, progress=False)
    assert keep_round_zero(out / "journal.jsonl") == 5

    def stop(_result) -> None:  # a Ctrl-C as the first trial completes its repeats
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        iotune.run(spec, out=out, resume=True, progress=False, on_result=stop)
    return spec, out


def test_a_point_short_of_its_repeats_is_partial_and_resume_completes_it(stopped):
    spec, out = stopped
    shown = cli("show", out).stdout.splitlines()
    rows = [x for x in shown if x.startswith(("none", "zlib", "bzip2"))]
    statuses = sorted(re.split(r"\s{2,}", row)[-1] for row in rows)
    assert statuses == ["ok", *["partial (2 of 3 repeats)"] * 4], shown
    said = cli("recommend", out).stdout.splitlines()
    assert said[0].startswith("4 partial points (2 of 3 repeats), the run was stopped: left out")
    assert "--resume" in said[0]
    ok = iotune.open_results(out).where(lambda d: d["status"] == "ok", drop=True)
    (codec,) = ok["codec"].values
    assert any(x.startswith("winner:") and f"codec={codec}" in x for x in said)
    assert "2 configurations qualify" not in "\n".join(said)  # the complete one only
    cli("run", spec, "-o", out, "--resume", "--no-progress")
    ds = iotune.open_results(out)
    assert set(ds["status"].values.ravel().astype(str)) - {"not_applicable"} == {"ok"}
    assert int(ds["repeats_used"].max()) == 3
    assert not iotune.recommend(ds, importance=False).partial_note


def test_the_progress_of_a_resumed_run_counts_each_planned_trial_once(tmp_path: Path):
    """Resumed after one of three interleaved rounds: the bar ends at 5/5, never past it."""
    spec, out = tmp_path / "s.yaml", tmp_path / "out"
    spec.write_text(yaml.safe_dump(MEMORY))
    plan = json.loads(cli("plan", spec, "--format", "json").stdout)
    n = len(plan["trials"])
    iotune.run(spec, out=out, progress=False)
    keep_round_zero(out / "journal.jsonl")
    shown = cli("run", spec, "-o", out, "--resume").stderr
    counts = [(int(a), b) for a, b in re.findall(r"\| (\d+)/(\S+) trials", shown)]
    assert counts and counts[-1] == (n, str(n)), shown
    assert all(total == str(n) and done <= n for done, total in counts), counts


SEARCH = {
    **MEMORY,
    "name": "partial-search",
    "parameters": {"chunks": [[8, 32, 32], [1, 32, 32]], "codec": ["none", "zlib"], "level": 1},
    "measure": {"repeats": 2, "cache": "warm", "fsync": False},
    "search": {"strategy": "random", "budget": 6, "objective": "write", "seed": 3},
}


def test_the_progress_of_a_resumed_search_counts_to_its_budget(tmp_path: Path):
    """Re-measurements count as the budget counts them; a resumed search ends at 6/6."""
    spec, out = tmp_path / "s.yaml", tmp_path / "out"
    spec.write_text(yaml.safe_dump(SEARCH))
    seen: list[str] = []

    def stop(result) -> None:
        seen.append(result.id)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        iotune.tune(spec, out=out, progress=False, on_result=stop)
    shown = cli("tune", spec, "-o", out, "--resume").stderr
    counts = [(int(a), b) for a, b in re.findall(r"\| (\d+)/(\S+) trials", shown)]
    assert counts and counts[0][0] == 3 and counts[-1] == (6, "6"), shown
    assert all(total == "6" and done <= 6 for done, total in counts), counts
    lines = (out / "journal.jsonl").read_text().splitlines()[1:]
    assert len(lines) == 6  # what the bar counted: every trial the budget paid for


# two trials of zlib 9 on random floats, a few tenths of a second a repeat: the stop lands
# while round 1 runs, so every point has one repeat of three
SLOW = {
    "version": 1,
    "name": "stopped",
    "workload": {"shape": {"time": 8, "y": 256, "x": 256}, "dtype": "float32", "field": "random"},
    "backend": "netcdf4",
    "parameters": {"chunks": [[4, 256, 256], [8, 256, 256]], "codec": "zlib", "level": 9},
    "read": {"patterns": ["full"]},
    "measure": {"repeats": 3, "order": "interleaved", "noise_probes": 0},
}


@pytest.mark.slow
def test_ctrl_c_after_one_round_leaves_only_partial_points_without_intervals(tmp_path: Path):
    spec, out = tmp_path / "s.yaml", tmp_path / "out"
    spec.write_text(yaml.safe_dump(SLOW))
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    journal, deadline = out / "journal.jsonl", time.monotonic() + 120
    while time.monotonic() < deadline:
        lines = journal.read_text().splitlines()[1:] if journal.exists() else []
        if len(lines) >= 2 and lines[-1].endswith("}"):
            break
        time.sleep(0.005)
    time.sleep(0.05)  # the run records the line it wrote; round 1 takes longer than this
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    lines = journal.read_text().splitlines()[1:]
    assert [json.loads(x)["part"] for x in lines] == [0, 0], "stopped too late to test"
    shown = cli("show", out).stdout
    assert shown.count("partial (1 of 3 repeats)") == 2 and " ok" not in shown
    said = cli("recommend", out).stdout
    assert said.startswith("only partial points: the run was stopped before any point")
    assert "--resume" in said.splitlines()[0]
    assert said.count("[n=1, no interval]") == 2  # winner and runner-up: no [x to x]
    assert not re.search(r"\[(\S+) to \1\]", said)
