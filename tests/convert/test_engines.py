"""The engine chosen per target and executor, and a Zarr target's regions on a dask cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iotune.app.apply import apply
from iotune.backends import get_backend
from iotune.convert.engines import choose
from iotune.core.errors import UsageError
from tests.convert.test_convert import assert_same_data

SETTINGS = "chunks=4x8x8 codec=zlib level=2 shuffle=byte"


def test_the_engine_says_what_runs_where() -> None:
    netcdf, zarr = (get_backend(n).apply_target() for n in ("netcdf4", "zarr"))
    assert netcdf is not None and zarr is not None
    assert choose(netcdf).where == "this process"
    assert choose(zarr, executor="dask").where == "a local dask cluster"
    assert choose(zarr, scheduler="tcp://127.0.0.1:8786").where.startswith("dask scheduler")
    serial = choose(netcdf, executor="dask")  # one writer per netCDF4 file
    assert serial.where == "this process" and "does not apply" in serial.reason
    with pytest.raises(UsageError, match="--executor: 'mpi'; allowed: serial, dask"):
        choose(zarr, executor="mpi")


def test_a_netcdf_target_under_dask_runs_serially(cf_source: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.nc"
    report = apply(None, cf_source, target, settings=SETTINGS, executor="dask", progress=False)
    assert "this process" in report.engine and "one writer" in report.engine
    assert_same_data(cf_source, target)


def test_zarr_regions_on_a_local_dask_cluster(cf_source: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.zarr"
    report = apply(
        None,
        cf_source,
        target,
        settings=SETTINGS,
        executor="dask",
        max_mem="30KB",  # per worker: blocks of two dimensions, 20 regions
        verify="full",
        progress=False,
    )
    assert "local dask cluster" in report.engine and "--max-mem 29.3KiB per worker" in report.engine
    assert report.regions == 20 and report.regions_verified == 20
    assert_same_data(cf_source, target)
    journal = target.with_name(target.name + ".iotune-journal")
    lines = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    written = [e["written"] for e in lines if "written" in e]  # the last line: "finished"
    assert sorted(written) == list(range(20))


def test_the_command_line_takes_the_executor(cf_source: Path, tmp_path: Path, capsys) -> None:
    from iotune.cli.main import main

    target = tmp_path / "out.nc"
    args = ["apply", "--settings", SETTINGS, str(cf_source), "-o", str(target)]
    assert main([*args, "--executor", "dask", "--no-progress"]) == 0
    assert "engine: regions (this process)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        main([*args, "--executor", "mpi"])
    assert stopped.value.code == 2 and "--executor" in capsys.readouterr().err


def test_the_interpreter_is_taken_off_max_mem_and_messages_name_the_limit() -> None:
    from iotune.convert.memory import INTERPRETER_BYTES, data_budget, limit_text

    assert data_budget(2**30) == 2**30 - INTERPRETER_BYTES
    assert data_budget(60_000) == 60_000  # below the interpreter: the data only
    assert data_budget(INTERPRETER_BYTES + 10) == INTERPRETER_BYTES  # never decreasing
    err = UsageError("--max-mem 768MiB: one chunk along the first two dimensions needs 2GiB")
    text = limit_text(err, budget=768 * 2**20, limit=2**30)
    assert text.startswith("--max-mem 1GiB (768MiB for data): one chunk")
