import json

import numpy as np
import pytest
import xarray as xr

from iotune.core.errors import ResultsError
from iotune.model.records import TrialResult
from iotune.results.dataset import SCHEMA_VERSION, open_results, save, to_dataset
from iotune.runner.plan import make_plan
from iotune.specfile.parse import load_spec_text

SPEC = """
version: 1
name: crafted
workload: {shape: {time: 8, y: 16, x: 16}}
parameters:
  chunks: [contiguous, [8, 16, 16]]
  codec: [none, zlib]
  chunk_cache: [1MiB, 4MiB]
read: {patterns: [full, timeseries]}
measure: {repeats: 2}
"""


def crafted(trial_id: str, k: float, status: str = "ok") -> TrialResult:
    reads = {
        p: [
            {
                "s": 1 / (k + r + 1),
                "cpu_s": 0.1,
                "bytes": 4096,
                "ops": 1,
                "MiBps": k + r,
                "resident_fraction": 0.0,
                "cache": "cold",
            }
            for r in range(2)
        ]
        for p in ("full", "timeseries")
    }
    return TrialResult(
        trial_id,
        status,
        "" if status == "ok" else "OSError: boom",
        write=[{"s": 1.0, "cpu_s": 0.5, "MiBps": 10 * k + r} for r in range(2)],
        reads=reads if status == "ok" else {},
        file_bytes=2048,
        raw_bytes=4096,
    )


@pytest.fixture
def plan():
    return make_plan(load_spec_text(SPEC))


def test_dataset_has_the_schema_and_puts_values_at_their_labels(plan):
    done = {t.id: crafted(t.id, i + 1.0) for i, t in enumerate(plan.trials)}
    failed = plan.trials[-1].id
    done[failed] = crafted(failed, 0, status="failed")
    ds = to_dataset(plan, done, provenance={"host": "h"})
    assert dict(ds.sizes) == {"chunks": 2, "codec": 2, "chunk_cache": 2, "pattern": 2, "repeat": 2}
    assert ds["write_MiBps"].dims == ("chunks", "codec", "chunk_cache", "repeat")
    assert ds["read_MiBps"].dims == ("chunks", "codec", "chunk_cache", "pattern", "repeat")
    assert ds["write_MiBps"].attrs["units"] == "MiB/s"
    assert ds.attrs["schema_version"] == SCHEMA_VERSION
    assert ds.attrs["provenance_host"] == "h"
    assert ds.attrs["swept"] == "chunks codec chunk_cache"
    first = plan.trials[0]
    point = next(p for p in plan.points if p.trial_id == first.id)
    cell = ds.sel(point.coords)
    assert cell["status"].item() == "ok"
    assert cell["write_MiBps"].values.tolist() == [10.0, 11.0]
    assert cell["ratio"].item() == 2.0
    assert json.loads(cell["effective"].item())["codec"] == first.params["codec"]
    statuses = set(ds["status"].values.ravel())
    assert statuses == {"ok", "failed", "not_applicable"}
    na = ds.sel(chunks="contiguous", codec="zlib", chunk_cache=2**20)
    assert na["status"].item() == "not_applicable"
    assert "chunked storage" in na["error"].item()
    assert np.isnan(na["write_MiBps"]).all()


def test_unfinished_trials_are_pending(plan):
    ds = to_dataset(plan, {})
    assert set(ds["status"].values.ravel()) == {"pending", "not_applicable"}


def test_save_is_atomic_and_open_results_accepts_dir_or_file(plan, tmp_path):
    ds = to_dataset(plan, {t.id: crafted(t.id, 1.0) for t in plan.trials})
    path = save(ds, tmp_path / "results.nc")
    assert [p.name for p in tmp_path.iterdir()] == ["results.nc"]
    for target in (tmp_path, path):
        again = open_results(target)
        xr.testing.assert_identical(again.drop_attrs(), ds.drop_attrs())
    plain = xr.open_dataset(path)
    assert "write_MiBps" in plain
    plain.close()


def test_open_results_errors(tmp_path):
    with pytest.raises(ResultsError, match="no results"):
        open_results(tmp_path / "missing.nc")
    xr.Dataset({"a": ("x", [1])}, attrs={"schema_version": 99}).to_netcdf(tmp_path / "x.nc")
    with pytest.raises(ResultsError, match="schema_version 99"):
        open_results(tmp_path / "x.nc")
    (tmp_path / "junk.nc").write_text("not netcdf")
    with pytest.raises(ResultsError, match="not a readable results file"):
        open_results(tmp_path / "junk.nc")
