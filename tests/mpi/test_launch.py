"""Launch commands, layout arithmetic, hint sets and parallel availability (no MPI needed)."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.backends.mpiio.backend import MpiioBackend
from iotune.cli.main import main
from iotune.core.errors import NotApplicable, SpecError
from iotune.measuring.data import Field
from iotune.model.spec import Workload
from iotune.mpi import launch as mpi
from iotune.runner.plan import make_plan
from iotune.specfile.parse import parse_spec

W = Workload(("time", "y", "x"), (6, 10, 14))


def spec(parameters, *, hints=None, backend="mpiio", **extra):
    data = {
        "version": 1,
        "workload": {"shape": {"time": 6, "y": 10, "x": 14}},
        "backend": backend,
        "parameters": parameters,
        **extra,
    }
    if hints is not None:
        data["hints"] = hints
    return parse_spec(data)


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4, 6, 12])
def test_blocks_cover_the_array_once(nprocs):
    dims = mpi.decompose(nprocs, W.shape)
    assert int(np.prod(dims)) == nprocs
    seen = np.zeros(W.shape, int)
    for rank in range(nprocs):
        starts, sizes = mpi.block_of(rank, dims, W.shape)
        assert all(s > 0 for s in sizes)
        seen[tuple(slice(a, a + n) for a, n in zip(starts, sizes, strict=True))] += 1
    assert (seen == 1).all()


def test_too_many_ranks_for_the_array_is_not_applicable():
    with pytest.raises(ValueError, match="cannot each get a block"):
        mpi.decompose(13 * 13, (6, 10, 14))
    with pytest.raises(NotApplicable):
        MpiioBackend.resolve({"nprocs": 17, "access": "block3d"}, Workload(("y", "x"), (4, 4)))


def test_contiguous_and_strided_pieces_tile_the_shared_file():
    for access in ("contiguous", "strided"):
        params = {"nprocs": 3, "bytes_per_rank": 40, "transfer_size": 10, "access": access}
        spans = sorted(p for r in range(3) for p in mpi.pieces(r, params))
        assert spans == [(i * 10, 10) for i in range(12)]
    strided = {"nprocs": 2, "bytes_per_rank": 20, "transfer_size": 10, "access": "strided"}
    assert mpi.pieces(1, strided) == [(10, 10), (30, 10)]


def test_the_stream_is_the_workload_bytes_repeated():
    data = Field(W).slab(0, 6).tobytes()
    assert mpi.stream(W, 0, len(data)).tobytes() == data
    assert mpi.stream(W, len(data) - 5, 15).tobytes() == data[-5:] + data[:10]


def test_launcher_default_and_template(monkeypatch):
    assert mpi.launcher_command("srun -n {nprocs} --cpu-bind=cores", 8) == [
        "srun",
        "-n",
        "8",
        "--cpu-bind=cores",
    ]
    monkeypatch.setattr(mpi, "find_mpiexec", lambda: None)
    with pytest.raises(mpi.UsageError, match="no MPI launcher"):
        mpi.launcher_command(None, 2)


def test_launcher_must_say_where_nprocs_goes():
    with pytest.raises(SpecError, match=r"execution.launcher: .*\{nprocs\}"):
        spec({"nprocs": 2}, execution={"launcher": "srun -n 4"})
    sweep = spec({"nprocs": 2}, execution={"launcher": "srun -n {nprocs}"})
    assert sweep.execution.launcher == "srun -n {nprocs}"


def test_the_launcher_is_not_part_of_a_trials_identity():
    """--resume under another launcher (mpiexec here, srun in the job) re-runs nothing."""
    ids = {
        launcher: [t.id for t in make_plan(spec({"nprocs": 2}, **extra)).trials]
        for launcher, extra in [
            ("default", {}),
            ("srun", {"execution": {"launcher": "srun -n {nprocs}"}}),
            ("mpiexec", {"execution": {"launcher": "mpiexec -n {nprocs} --bind-to core"}}),
        ]
    }
    assert ids["default"] == ids["srun"] == ids["mpiexec"]
    trial = make_plan(spec({"nprocs": 2}, execution={"launcher": "srun -n {nprocs}"})).trials[0]
    assert "launcher" not in trial.params


def test_a_hint_typo_names_the_field_and_the_close_match():
    with pytest.raises(SpecError) as err:
        spec({"hints": "cb_off"}, hints={"cb_off": {"romio_cb_wirte": "disable"}})
    message = str(err.value)
    assert message.startswith("hints.cb_off.romio_cb_wirte: unknown MPI-IO hint")
    assert "romio_cb_write" in message and "x-" in message and "\n" not in message


@pytest.mark.parametrize(
    ("hint", "value", "match"),
    [
        ("romio_cb_write", "off", "allowed: enable, disable, automatic"),
        ("cb_buffer_size", "lots", "cb_buffer_size"),
        ("cb_nodes", -2, "integer >= 0"),
        ("romio_no_indep_rw", "maybe", "allowed: true, false"),
    ],
)
def test_hint_values_are_checked(hint, value, match):
    with pytest.raises(SpecError, match=match):
        spec({"hints": "h"}, hints={"h": {hint: value}})


def test_hint_sets_normalise_values_and_pass_vendor_hints():
    hints = {
        "h": {
            "cb_buffer_size": "16MiB",
            "direct_write": True,
            "cb_nodes": 2,
            "x-cray_ds_write_lock": 1,
        }
    }
    sweep = spec({"hints": ["default", "h"]}, hints=hints)
    assert sweep.hints["h"] == {
        "cb_buffer_size": "16777216",
        "cb_nodes": "2",
        "cray_ds_write_lock": "1",
        "direct_write": "true",
    }
    assert [dict(t.hints) for t in make_plan(sweep).trials] == [{}, sweep.hints["h"]]


def test_an_undefined_hint_set_is_an_error():
    with pytest.raises(SpecError, match=r"parameters.hints\[1\]: unknown hint set 'cb_of'"):
        spec({"hints": ["default", "cb_of"]}, hints={"cb_off": {}})


def test_stripe_size_must_suit_lustre():
    with pytest.raises(SpecError, match="multiple of 64KiB"):
        spec({"stripe_size": "100KiB"})


def test_fpp_makes_collective_and_strided_the_same_trial():
    sweep = spec(
        {"nprocs": 2, "layout": "fpp", "io": ["collective", "independent"], "access": "strided"}
    )
    plan = make_plan(sweep)
    assert len(plan.trials) == 1
    assert plan.trials[0].params["io"] == "independent"
    assert any("collective I/O needs a shared file" in p.reason for p in plan.points)


@pytest.mark.parametrize("backend", ["h5py", "netcdf4"])
def test_serial_libraries_reject_nprocs_above_one_with_the_reason(backend):
    plan = make_plan(spec({"nprocs": [1, 2]}, backend=backend))
    assert len(plan.trials) == 1 and "nprocs" not in plan.trials[0].params
    (skipped,) = [p for p in plan.points if not p.applicable]
    assert "built without" in skipped.reason


def test_backends_lists_parallel_support(capsys):
    assert main(["backends"]) == 0
    out = capsys.readouterr().out
    assert "parallel" in out.splitlines()[0]
    assert "h5py: parallel (nprocs > 1) unavailable: h5py" in out
    assert "netcdf4: parallel (nprocs > 1) unavailable" in out
