"""The user's code on object storage: opened with the store's options, its requests counted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from tests.objectstore.conftest import KEYS

pytestmark = pytest.mark.slow

CODE = """
def box_mean(ds):
    return ds["data"].isel(y=slice(2, 10), x=slice(4, 12)).mean("time")
"""


def test_a_user_pattern_reads_through_the_store(tmp_path: Path, s3_server, bucket: str) -> None:
    (tmp_path / "analysis.py").write_text(CODE)
    spec = {
        "version": 1,
        "name": "s3-user",
        "workload": {"shape": {"time": 16, "y": 32, "x": 32}, "dtype": "int16"},
        "backend": ["zarr-object", "netcdf4-object"],
        "parameters": {"chunks": [[4, 16, 16], [16, 32, 32]]},
        "read": {"patterns": [{"name": "box", "script": "analysis.py", "function": "box_mean"}]},
        "measure": {"repeats": 1, "noise_probes": 0},
        "storage": {"url": f"s3://{bucket}/runs", "endpoint": s3_server.endpoint},
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    env = os.environ | KEYS | {"AWS_DEFAULT_REGION": "us-east-1"}
    cmd = [sys.executable, "-m", "iotune", "run", str(path), "-o", str(tmp_path / "out")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ds = xr.open_dataset(tmp_path / "out" / "results.nc")
    assert set(np.unique(ds["status"].values)) == {"ok"}, ds["error"].values
    box = ds.sel(pattern="box")
    assert (box["read_bytes"] > 0).all()  # what the requests fetched
    np.testing.assert_array_equal(box["read_bytes"], box["read_bytes_fetched"].squeeze("repeat"))
    assert (box["read_requests"].sel(request="GET") > 0).all()
    assert box["read_over_read"].isnull().all()  # what the code needed is not known
    assert set(np.unique(box["read_cache"].values)) == {"cold"}
    ds.close()
