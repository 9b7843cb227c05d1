"""The mpiio backend end to end: real ranks under the mpich wheel's mpiexec."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from iotune.core.errors import VerificationError
from iotune.model.records import TrialResult, TrialTask
from iotune.mpi.launch import fill_result, find_mpiexec
from iotune.results.dataset import to_dataset
from iotune.results.summary import table
from iotune.runner.plan import make_plan
from iotune.runner.trial import run_trial
from iotune.specfile.parse import parse_spec


def _missing() -> str:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed"
    return "" if find_mpiexec() else "no mpiexec beside Python or on PATH"


MISSING = _missing()
pytestmark = pytest.mark.skipif(
    bool(MISSING) and os.environ.get("IOTUNE_REQUIRE_MPI") != "1", reason=MISSING or "ok"
)
FIXTURES = Path(__file__).parents[1] / "fixtures"
W = {"shape": {"time": 8, "y": 64, "x": 96}, "dtype": "int16"}


def sweep_of(parameters, *, hints=None, execution=None, repeats=1):
    spec = {
        "version": 1,
        "name": "mpi-test",
        "workload": W,
        "backend": "mpiio",
        "parameters": parameters,
        "read": {"patterns": ["full"]},
        "measure": {"repeats": repeats},
    }
    if hints is not None:
        spec["hints"] = hints
    if execution is not None:
        spec["execution"] = execution
    return parse_spec(spec)


def run(tmp_path, parameters, **kw):
    sweep = sweep_of(parameters, **kw)
    plan = make_plan(sweep)
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    done = {}
    for trial in plan.trials:
        task = TrialTask(
            trial, sweep.workload, sweep.read, sweep.measure, str(scratch), sweep.execution.launcher
        )
        done[trial.id] = run_trial(task)
    return plan, done


def only(done) -> TrialResult:
    (result,) = done.values()
    return result


@pytest.mark.mpi
def test_two_ranks_write_and_read_one_shared_file_collectively(tmp_path):
    params = {"nprocs": 2, "layout": "shared", "io": "collective", "transfer_size": "16KiB"}
    plan, done = run(tmp_path, params, repeats=2)
    result = only(done)
    assert result.status == "ok", result.error
    assert result.raw_bytes >= 8 * 64 * 96 * 2  # the workload's bytes, rounded up per rank
    assert len(result.write) == 2 and len(result.reads["full"]) == 2
    for entry in result.reads["full"]:
        assert entry["cache"] == "cold" and entry["resident_fraction"] <= 0.05
        assert entry["s_fastest_rank"] <= entry["s"]
        assert entry["MiBps"] == pytest.approx(result.raw_bytes / 2**20 / entry["s"])
    assert result.stored["ranks"] == 2
    assert result.stored["hints_effective"]["romio_cb_write"] == "automatic"
    assert not list((tmp_path / "scratch").iterdir())  # trial directories are removed
    ds = to_dataset(plan, done)
    assert ds["write_MiBps"].notnull().all() and "hints_effective" in ds
    assert json.loads(ds["hints_effective"].item())["cb_nodes"]


@pytest.mark.mpi
def test_file_per_process_and_strided_and_block3d_round_trip(tmp_path):
    params = {
        "nprocs": 2,
        "layout": ["shared", "fpp"],
        "access": ["strided", "block3d"],
        "io": "independent",
        "transfer_size": "8KiB",
    }
    plan, done = run(tmp_path, params)
    assert len(done) == 3  # fpp strided is fpp contiguous; fpp block3d does not exist
    for result in done.values():
        assert result.status == "ok", result.error
        assert result.reads["full"][0]["cache"] == "cold"
    reasons = [p.reason for p in plan.points if not p.applicable]
    assert any("shared file" in r for r in reasons)
    ds = to_dataset(plan, done)
    assert "fpp" in table(ds)


@pytest.mark.mpi
def test_requested_hints_show_up_in_get_info_and_ignored_ones_are_listed(tmp_path):
    hints = {"big": {"cb_buffer_size": "8MiB", "romio_ds_write": "disable", "x-no_such": 1}}
    plan, done = run(tmp_path, {"nprocs": 2, "hints": "big"}, hints=hints)
    stored = only(done).stored
    assert stored["hints_effective"]["cb_buffer_size"] == "8388608"
    assert stored["hints_effective"]["romio_ds_write"] == "disable"
    assert stored["hints_ignored"] == {"no_such": {"requested": "1", "effective": None}}
    ds = to_dataset(plan, done)
    assert json.loads(ds.attrs["hint_sets"])["big"]["cb_buffer_size"] == "8388608"


@pytest.mark.mpi
def test_typed_hints_merge_into_the_set_and_are_read_back(tmp_path):
    hints = {"cb": {"romio_cb_write": "enable"}}
    params = {"nprocs": 2, "io": "collective", "hints": "cb", "cb_buffer_size": "4MiB"}
    _plan, done = run(tmp_path, {**params, "cb_nodes": [1, 2]}, hints=hints)
    by_nodes = {r.stored["hints_effective"]["cb_nodes"]: r for r in done.values()}
    for result in done.values():
        assert result.status == "ok", result.error
        assert result.stored["hints_effective"]["cb_buffer_size"] == str(4 * 2**20)
        assert result.stored["hints_effective"]["romio_cb_write"] == "enable"
    # one node here: ROMIO keeps one aggregator whatever is asked, and says so
    assert set(by_nodes) == {"1"}
    asked_two = [r for r in done.values() if r.stored["hints_ignored"]]
    assert asked_two[0].stored["hints_ignored"] == {
        "cb_nodes": {"requested": "2", "effective": "1"}
    }


def test_a_typed_hint_the_set_also_names_does_not_apply():
    from iotune.backends.mpiio.backend import MpiioBackend
    from iotune.core.errors import NotApplicable
    from iotune.model.records import HINT_VALUES

    params = {"nprocs": 2, "hints": "cbn", HINT_VALUES: {"cb_nodes": "2"}, "cb_nodes": 1}
    with pytest.raises(NotApplicable, match="sets cb_nodes and so does the parameter"):
        MpiioBackend.resolve(params, sweep_of({"nprocs": 2}).workload)


@pytest.mark.mpi
def test_a_wrong_offset_is_a_verification_error_not_a_fast_result(tmp_path):
    shim = Path(__file__).with_name("mpi_wrong_offsets.py")
    launcher = f"{find_mpiexec()} -n {{nprocs}} {sys.executable} {shim}"
    _, done = run(tmp_path, {"nprocs": 2}, execution={"launcher": launcher})
    result = only(done)
    assert result.status == "failed"
    assert "VerificationError" in result.error and "differs" in result.error


@pytest.mark.mpi
def test_stripes_are_set_on_an_empty_directory_and_read_back_on_lustre(tmp_path, monkeypatch):
    bin_dir, state = tmp_path / "bin", tmp_path / "lfs-state"
    bin_dir.mkdir()
    (bin_dir / "lfs").symlink_to(FIXTURES / "fake-lfs")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LFS_DIR", str(state))
    monkeypatch.setenv("IOTUNE_FS_TYPE", "lustre")
    params = {"nprocs": 2, "stripe_count": 4, "stripe_size": "1MiB"}
    plan, done = run(tmp_path, params)
    result = only(done)
    assert result.status == "ok", result.error
    calls = [json.loads(line) for line in (state / "calls.jsonl").read_text().splitlines()]
    first, last = calls[0], calls[-1]
    assert first["argv"][:5] == ["setstripe", "-c", "4", "-S", "1048576"]
    assert first["target"] == {"exists": True, "is_dir": True, "entries": []}
    assert last["argv"][0] == "getstripe" and last["argv"][-1].endswith("shared.dat")
    stripe = result.stored["stripe"]
    assert stripe["applied"] and stripe["fs_type"] == "lustre"
    assert stripe["layout"]["stripe_count"] == 4 and stripe["layout"]["stripe_size"] == 2**20
    requested = result.stored["hints_requested"]
    assert requested["striping_factor"] == "4" and requested["striping_unit"] == "1048576"
    ds = to_dataset(plan, done)
    assert json.loads(ds["stripe_layout"].item())["layout"]["stripe_count"] == 4


@pytest.mark.mpi
def test_stripes_elsewhere_are_recorded_as_not_applied(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IOTUNE_FS_TYPE", "ext4")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere") + os.pathsep + os.environ["PATH"])
    plan, done = run(tmp_path, {"nprocs": 1, "stripe_count": [2, 4]})
    for result in done.values():
        assert result.status == "ok", result.error
        assert result.stored["stripe"] == {
            "applied": False,
            "fs_type": "ext4",
            "requested": result.stored["stripe"]["requested"],
            "layout": None,
        }
    ds = to_dataset(plan, done)
    assert "not applied" in ds.attrs["stripe_settings"] and "ext4" in ds.attrs["stripe_settings"]
    assert capsys.readouterr().err.count("not applied") <= 1  # said once per process


def test_failed_per_rank_checksums_and_file_checks_raise():
    rep = {
        "write_s": [1.0, 2.0],
        "write_cpu_s": [0.1, 0.1],
        "read_s": [1.0, 1.0],
        "read_cpu_s": [0.1, 0.1],
        "crc_ok": [True, False],
        "check": "",
        "file_bytes": 512,
        "cache": "cold",
        "resident_fraction": 0.0,
    }
    with pytest.raises(VerificationError, match=r"rank\(s\) 1 read back"):
        fill_result(TrialResult("x", "ok"), {"repeats": [rep]}, total=512, ops=4)
    rep |= {"crc_ok": [True, True], "check": "shared.dat differs from the data written at byte 7"}
    with pytest.raises(VerificationError, match="byte 7"):
        fill_result(TrialResult("x", "ok"), {"repeats": [rep]}, total=512, ops=4)
    rep["check"] = ""
    result = TrialResult("x", "ok")
    fill_result(result, {"repeats": [rep]}, total=512, ops=4)
    assert result.write[0]["s"] == 2.0 and result.write[0]["s_fastest_rank"] == 1.0
