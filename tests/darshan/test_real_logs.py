"""Logs captured on this kind of machine read right (tests/fixtures/darshan/README.md).

An MPI-IO run writing 1 MiB blocks is not told its requests are small (Darshan's
100K_1M bin includes 1 MiB; the exact common sizes say 1 MiB); a Python
application's report shows its data file, not the interpreter's files, unless
asked; a generated spec's ``search.focus`` follows the findings' ranking.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from iotune.app import api
from iotune.core.units import format_size
from iotune.darshan_.summary import is_data
from tests.darshan.conftest import HDF5_LOG, IOR_LIKE_LOG, MACSIO_LOG, MPIIO_LOG, PYTHON_LOG

ROOT = Path(__file__).resolve().parents[2]
MiB = 2**20


def _no_finding_contradicts_the_access_sizes(found) -> None:
    """A "smaller than 1 MiB" finding only where requests under 1 MiB were counted."""
    for f in found.findings:
        if f.code not in ("small-writes", "small-reads"):
            continue
        group = next(g for g in found.groups if g.name == f.group)
        op = "WRITE" if f.code == "small-writes" else "READ"
        bins = group.sizes[op]
        one = min(dict(group.common).get(MiB, 0), bins["100K_1M"])
        small = sum(bins[b] for b in ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M")) - one
        assert f.text.startswith(f"{small / sum(bins.values()):.0%} of "), f.text
        assert f"{format_size(MiB, exact=False)} x" not in f.text.split("(")[1], f.text


def test_one_mib_collective_writes_are_not_small() -> None:
    found = api.from_darshan(IOR_LIKE_LOG)
    main = found.main
    assert (main.name, main.layer, main.io) == (
        "/tmp/iotune-capture/shared.dat",
        "MPI-IO",
        "collective",
    )
    assert main.common == ((MiB, 128),)  # MPIIO_ACCESS1_ACCESS, MPIIO_ACCESS1_COUNT
    assert main.sizes["WRITE"]["100K_1M"] == main.writes == 128  # the bin that includes 1 MiB
    assert not [f for f in found.findings if f.kind == "problem"], found.text()
    assert "smaller than 1 MiB" not in found.text()
    assert found.spec["baseline"]["transfer_size"] == "1MiB"


@pytest.mark.parametrize("log", [IOR_LIKE_LOG, PYTHON_LOG, HDF5_LOG, MACSIO_LOG, MPIIO_LOG])
def test_no_finding_contradicts_the_logs_own_access_sizes(log: Path) -> None:
    _no_finding_contradicts_the_access_sizes(api.from_darshan(log))


def test_the_python_applications_data_file_and_nothing_else() -> None:
    found = api.from_darshan(PYTHON_LOG)
    assert [g.name for g in found.groups] == ["/tmp/iotune-capture/t2m.nc"]
    assert len(found.left_out) > 100
    assert not any(is_data(name) for name in found.left_out)
    assert any("/site-packages/" in n for n in found.left_out)
    assert any("/__pycache__/" in n for n in found.left_out)
    assert any(n.endswith("/netcdf_app.py") for n in found.left_out)
    text = found.text()
    assert "site-packages/" not in text and "__pycache__/" not in text
    assert f"{len(found.left_out)} interpreter and library files left out" in text
    assert "--all-files shows them" in text
    assert found.spec["description"].endswith("(file /tmp/iotune-capture/t2m.nc)")


def test_all_files_puts_the_data_file_first() -> None:
    everything = api.from_darshan(PYTHON_LOG, all_files=True)
    names = [g.name for g in everything.groups]
    assert names[0] == "/tmp/iotune-capture/t2m.nc"
    assert not any(is_data(n) for n in names[1:])
    assert everything.left_out == []
    # the data file is not the busiest: numpy's byte code weighs more than it
    assert max(g.bytes for g in everything.groups[1:]) > everything.groups[0].bytes
    assert len(names) - 1 == len(api.from_darshan(PYTHON_LOG).left_out)


def test_the_cli_shows_the_interpreters_files_on_request(tmp_path: Path) -> None:
    def run(*extra: str) -> str:
        command = [sys.executable, "-m", "iotune", "darshan", str(PYTHON_LOG), *extra]
        done = subprocess.run(
            [*command, "-o", str(tmp_path / "s.yaml")],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
            timeout=120,
        )
        return done.stdout

    plain, full = run(), run("--all-files")
    assert "__pycache__/" not in plain and "interpreter and library files left out" in plain
    assert "__pycache__/" in full and "left out" not in full
    assert full.index("/tmp/iotune-capture/t2m.nc (") < full.index("__pycache__/")


@pytest.mark.parametrize("log", [HDF5_LOG, MACSIO_LOG, MPIIO_LOG])
def test_search_focus_follows_the_findings_ranking(log: Path, tmp_path: Path) -> None:
    found = api.from_darshan(log, trial_size="64MiB")
    sweep = api.load_spec(api.write_darshan_spec(found, tmp_path / "spec.yaml"))
    problems = [f for f in found.findings if f.kind == "problem"]
    assert [f.share for f in problems] == sorted((f.share for f in problems), reverse=True)
    swept = {p.name for p in sweep.parameters if len(p.values) > 1}
    named = [p for f in problems if f.group == found.main.name for p in f.parameters]
    expected = tuple(p for p in dict.fromkeys(named) if p in swept)
    assert expected, found.text()
    assert sweep.search is not None and sweep.search.focus == expected
    assert f"search:\n  focus:\n  - {expected[0]}\n" in found.spec_text()


def test_no_focus_without_a_problem(tmp_path: Path) -> None:
    found = api.from_darshan(IOR_LIKE_LOG)
    assert "search" not in found.spec
    assert api.load_spec(api.write_darshan_spec(found, tmp_path / "spec.yaml")).search is None
