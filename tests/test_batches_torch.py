"""The batches pattern measured by torch's DataLoader, through the real CLI.

Where PyTorch is installed, ``loader: auto`` is torch's ``DataLoader`` over the
exported ``Dataset``; the results, ``show`` and ``recommend`` say so.  Skipped
without torch (a failure with ``IOTUNE_REQUIRE_TORCH=1``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
import yaml

STEP = 0.1  # long beside reading 4 tiny samples: 90 % busy even on a loaded machine
SWEEP = {
    "version": 1,
    "name": "torch-batches",
    "workload": {"shape": {"time": 64, "y": 16, "x": 16}, "dtype": "int16"},
    "backend": "netcdf4",  # zarr's workers: tests/runner/test_torch_loader.py
    "parameters": {"chunks": [1, 16, 16], "num_workers": [0, 2], "prefetch_factor": 2},
    "read": {"patterns": ["batches"], "batches": {"batch": 4, "batches": 6, "step": "100ms"}},
    "measure": {"repeats": 1, "noise_probes": 0},
}


def iotune(*args, cwd) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def torch_run(torch_module, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("torch-batches")
    (tmp / "spec.yaml").write_text(yaml.safe_dump(SWEEP, sort_keys=False))
    proc = iotune("run", "spec.yaml", "-o", "out", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    return tmp, xr.open_dataset(tmp / "out" / "results.nc")


@pytest.mark.slow
def test_auto_measures_with_torchs_dataloader_where_torch_is_installed(torch_run, torch_module):
    _, ds = torch_run
    assert set(ds["status"].values.ravel()) == {"ok"}, ds["error"].values
    assert set(ds["read_loader"].values.ravel()) == {"torch"}
    assert ds.attrs["provenance_loader"] == "torch"
    assert ds.attrs["provenance_version_torch"] == torch_module.__version__
    batches = ds.sel(pattern="batches")
    # a 100 ms step per batch: 6 batches take at least 0.6 s, and the accelerator is busy
    assert (batches["read_s"] >= 6 * STEP).all()
    utilisation = batches["read_utilisation"].values
    assert ((utilisation > 0) & (utilisation <= 1)).all()
    assert (batches["read_first_batch_s"] < batches["read_s"]).all()


@pytest.mark.slow
def test_show_and_recommend_say_which_loader_measured(torch_run):
    tmp, _ = torch_run
    shown = iotune("show", "out/results.nc", cwd=tmp)
    assert shown.returncode == 0, shown.stderr
    assert "read:batches measured by torch's DataLoader (torch " in shown.stdout
    text = iotune("recommend", "out/results.nc", "--objective", "read:batches", cwd=tmp)
    assert "measured by torch's DataLoader over the exported Dataset" in text.stdout


@pytest.mark.slow
def test_recommend_names_the_cheapest_configuration_keeping_the_accelerator_busy(torch_run):
    tmp, ds = torch_run
    proc = iotune(
        "recommend", "out/results.nc", "--objective", "read:batches", "--format", "json", cwd=tmp
    )
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["batches"]["loader"] == "torch"
    busy = ds["read_utilisation"].sel(pattern="batches").median("repeat")
    kept = busy.where(busy >= 0.9)
    if not np.isfinite(kept.values).any():
        pytest.skip(f"this machine kept no configuration 90 % busy: {busy.values.tolist()}")
    settings = rec["winner"]["settings"]
    fewest = int(kept.dropna("num_workers", how="all")["num_workers"].min())
    assert settings["num_workers"] == fewest
    assert "cheapest configuration keeping the accelerator >= 90% busy" in rec["tie_note"]
    assert rec["batches"]["utilisation"] >= 0.9
