"""The batches pattern measured by xbatcher's BatchGenerator, through the real CLI.

``read.batches.loader: xbatcher`` opens each trial's file with xarray (the
trial's ``dask_chunks``) and reads its batches with a ``BatchGenerator``; the
results, ``show`` and ``recommend`` say so, and the exported loop runs on the
file.  Skipped without xbatcher (a failure with ``IOTUNE_REQUIRE_XBATCHER=1``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
import yaml

BATCHES = {"sample": {"time": 2}, "batch": 3, "batches": 4, "step": "20ms", "loader": "xbatcher"}
SWEEP = {
    "version": 1,
    "name": "xbatcher-batches",
    "workload": {"shape": {"time": 32, "y": 8, "x": 8}, "dtype": "int16"},
    "backend": ["netcdf4", "zarr"],
    "parameters": {"chunks": [2, 8, 8], "dask_chunks": ["storage"], "num_workers": [0, 2]},
    "read": {"patterns": ["batches"], "batches": BATCHES},
    "measure": {"repeats": 1, "noise_probes": 0},
}


def iotune(*args, cwd) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def xbatcher_run(xbatcher_module, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("xbatcher-batches")
    (tmp / "spec.yaml").write_text(yaml.safe_dump(SWEEP, sort_keys=False))
    proc = iotune("run", "spec.yaml", "-o", "out", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    return tmp, xr.open_dataset(tmp / "out" / "results.nc")


@pytest.mark.slow
def test_xbatcher_reads_the_batches_and_the_results_say_so(xbatcher_run, xbatcher_module):
    _, ds = xbatcher_run
    ok = ds.sel(num_workers=0)
    assert set(ok["status"].values.ravel()) == {"ok"}, ok["error"].values
    assert set(ok["read_loader"].values.ravel()) == {"xbatcher"}
    assert ds.attrs["provenance_loader"] == "xbatcher"
    assert ds.attrs["provenance_version_xbatcher"] == xbatcher_module.__version__
    # xbatcher has no workers: such points do not apply, and say why
    assert set(ds["status"].sel(num_workers=2).values.ravel()) == {"not_applicable"}
    assert "does not apply to xbatcher" in str(ds["error"].sel(num_workers=2).values.ravel()[0])
    batches = ok.sel(pattern="batches")
    samples = BATCHES["batch"] * BATCHES["batches"]
    assert (batches["read_bytes"] == samples * 2 * 8 * 8 * 2).all()  # 2x8x8 int16 samples
    assert (batches["read_s"] >= BATCHES["batches"] * 0.02).all()  # a 20 ms step per batch
    utilisation = batches["read_utilisation"].values
    assert ((utilisation > 0) & (utilisation <= 1)).all()
    assert (batches["read_first_batch_s"] < batches["read_s"]).all()


@pytest.mark.slow
def test_show_and_recommend_name_xbatcher_and_its_loop_runs(xbatcher_run):
    tmp, _ = xbatcher_run
    shown = iotune("show", "out/results.nc", cwd=tmp)
    assert shown.returncode == 0, shown.stderr
    assert "read:batches measured by xbatcher's BatchGenerator (xbatcher " in shown.stdout
    proc = iotune(
        "recommend", "out/results.nc", "--objective", "read:batches", "--format", "json", cwd=tmp
    )
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["batches"]["loader"] == "xbatcher"
    export = rec["exports"]["xbatcher"]
    assert export["value"] == {
        "input_dims": {"time": 2, "y": 8, "x": 8},
        "batch_dims": {"time": 6},
    }
    assert "xbatcher.BatchGenerator(" in export["text"] and "xr.open_" in export["text"]


@pytest.mark.parametrize(("backend", "dask_chunks"), [("netcdf4", "storage"), ("zarr", None)])
def test_the_exported_loop_reads_the_batches_the_sweep_read(
    xbatcher_module, backend, dask_chunks, tmp_path
):
    from iotune.analysis.exports import all_exports
    from iotune.backends.exports_base import Target
    from iotune.measuring.data import Field
    from iotune.model.spec import Workload
    from tests.test_batches import written

    workload = Workload(("time", "y", "x"), (16, 8, 6), seed=3)
    path = written(backend, {"chunks": (4, 8, 6)}, workload, tmp_path)
    point = {"backend": backend, "chunks": "4x8x6"}
    if dask_chunks:
        point["dask_chunks"] = dask_chunks
    config = {"sample": {"time": 2}, "batch": 3, "batches": 2, "shuffle": False}
    target = Target("data", workload.dims, workload.shape, workload.dtype)
    found = all_exports(point, target, batches={**config, "loader": "xbatcher"})
    text = found["xbatcher"]["text"]
    assert "order = range(len(batches))" in text  # shuffle: false
    for name in ("'file.nc'", "'store.zarr'"):
        text = text.replace(name, repr(str(path)))
    got: list = []
    exec(text + "    got.append(batch)\n", {"got": got})  # the loop a user pastes
    data = Field(workload).slab(0, workload.shape[0])
    assert len(got) == 2  # 16 steps: two whole batches of 3 samples of 2 steps
    for k, batch in enumerate(got):
        expected = data[k * 6 : k * 6 + 6].reshape(3, 2, 8, 6)
        np.testing.assert_array_equal(batch, expected)
    assert "xbatcher" not in all_exports(point, target, batches=config)  # the torch loader's


def test_bad_loader_value_is_one_line_naming_the_allowed_ones(tmp_path):
    from tests.test_cli_errors import assert_usage_error

    spec = {**SWEEP, "read": {"patterns": ["batches"], "batches": {**BATCHES, "loader": "xb"}}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = iotune("validate", "spec.yaml", cwd=tmp_path)
    assert_usage_error(proc, "read.batches.loader", "'xb'", "auto, torch, iotune, xbatcher")


def test_a_sample_cut_across_other_dimensions_is_refused_for_xbatcher(xbatcher_module, tmp_path):
    from tests.test_cli_errors import assert_usage_error

    tiles = {**BATCHES, "sample": {"time": 2, "y": 4}}
    spec = {**SWEEP, "read": {"patterns": ["batches"], "batches": tiles}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = iotune("validate", "spec.yaml", cwd=tmp_path)
    assert_usage_error(proc, "read.batches.sample", "draws batches along time", "whole along y")
