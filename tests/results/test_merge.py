"""iotune.results.merge and `iotune merge`: one Dataset from sweeps of the same workload."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from iotune.cli.main import main
from iotune.core.errors import ResultsError
from iotune.results.dataset import open_results, save
from iotune.results.merge import merge


def test_union_of_coordinates_and_a_fixed_parameter_becomes_a_dimension(fake_results) -> None:
    a = fake_results({"parameters.chunk_cache": "1MiB"}, seed=1)
    b = fake_results(
        {"parameters.codec": ["zlib", "bzip2"], "parameters.chunk_cache": ["1MiB", "64MiB"]},
        seed=2,
    )
    m = merge([a, b])
    assert m.attrs["swept"] == "chunks codec chunk_cache"
    assert list(m["codec"].values) == ["none", "zlib", "bzip2"]
    assert list(m["chunk_cache"].values) == [2**20, 64 * 2**20]
    # a's points: a's numbers; b's new points: b's numbers; zlib/1MiB in both: the first's
    same = np.testing.assert_array_equal
    same(m["ratio"].sel(codec="none", chunk_cache=2**20), a["ratio"].sel(codec="none"))
    same(m["ratio"].sel(codec="bzip2"), b["ratio"].sel(codec="bzip2"))
    same(m["ratio"].sel(codec="zlib", chunk_cache=2**20), a["ratio"].sel(codec="zlib"))
    # neither sweep measured none with a 64 MiB cache
    missing = m["status"].sel(codec="none", chunk_cache=64 * 2**20)
    assert set(missing.values.ravel()) == {"pending"}
    assert "not measured" in str(m["error"].sel(codec="none", chunk_cache=64 * 2**20)[0].values)
    assert np.isnan(m["write_MiBps"].sel(codec="none", chunk_cache=64 * 2**20)).all()


def test_a_measured_point_fills_one_that_failed_first(fake_results) -> None:
    a = fake_results(seed=1)
    a["status"].loc[{"codec": "zlib"}] = "failed"
    a["write_MiBps"].loc[{"codec": "zlib"}] = np.nan
    b = fake_results(seed=2)
    m = merge([a, b])
    assert (m["status"] == "ok").all()
    same = np.testing.assert_array_equal
    same(m["write_MiBps"].sel(codec="zlib"), b["write_MiBps"].sel(codec="zlib"))
    same(m["write_MiBps"].sel(codec="none"), a["write_MiBps"].sel(codec="none"))


def test_provenance_of_every_input_is_kept(fake_results) -> None:
    m = merge([fake_results(seed=1), fake_results({"parameters.codec": ["bzip2"]}, seed=2)])
    sources = json.loads(m.attrs["merged_from"])
    assert [s["provenance_host"] for s in sources] == ["host1", "host2"]
    assert all("spec" in s and "spec_digest" in s for s in sources)
    assert m.attrs["provenance_host"] == "host1 | host2"
    assert json.loads(m.attrs["workload"])["shape"] == {"time": 16, "y": 64, "x": 64}


def test_backends_become_a_dimension(fake_results) -> None:
    a = fake_results(seed=1)
    b = fake_results({"backend": "h5py"}, seed=2)
    m = merge([a, b])
    assert m["read_MiBps"].dims[0] == "backend"
    assert list(m["backend"].values) == ["netcdf4", "h5py"]
    assert m.attrs["backends"] == "netcdf4 h5py"


def test_different_workloads_are_refused_naming_the_field(fake_results) -> None:
    a = fake_results()
    b = fake_results({"workload.shape.time": 8, "parameters.chunks": [[8, 16, 16]]})
    with pytest.raises(ResultsError) as err:
        merge([a, b])
    message = str(err.value)
    assert "workload.shape.time differs (16 in input 1, 8 in input 2)" in message
    assert "\n" not in message


def test_different_cache_modes_are_refused(fake_results) -> None:
    with pytest.raises(ResultsError, match=r"measure\.cache differs \('cold' in input 1"):
        merge([fake_results(), fake_results({"measure.cache": "warm"})])


def test_a_parameter_unset_in_one_input_is_refused(fake_results) -> None:
    a = fake_results({"parameters.chunk_cache": None})
    b = fake_results({"parameters.chunk_cache": ["1MiB", "64MiB"]})
    with pytest.raises(ResultsError, match="'chunk_cache' is swept in another input but not set"):
        merge([a, b])


def test_one_input_is_refused(fake_results) -> None:
    with pytest.raises(ResultsError, match="at least two"):
        merge([fake_results()])


def test_cli_merges_files_and_the_result_opens(tmp_path: Path, capsys, fake_results) -> None:
    a, b = tmp_path / "a.nc", tmp_path / "b" / "results.nc"
    save(fake_results(seed=1), a)
    save(fake_results({"parameters.codec": ["bzip2"]}, seed=2), b)
    out = tmp_path / "all.nc"
    assert main(["merge", str(a), str(b.parent), "-o", str(out)]) == 0
    assert "merged 2 sweeps" in capsys.readouterr().out
    ds = open_results(out)
    assert list(ds["codec"].values) == ["none", "zlib", "bzip2"]
    assert json.loads(ds.attrs["merged_from"])[0]["source"] == str(a)


def test_cli_refuses_different_workloads_with_exit_2(tmp_path: Path, capsys, fake_results) -> None:
    a, b = tmp_path / "a.nc", tmp_path / "b.nc"
    save(fake_results(), a)
    save(fake_results({"workload.dtype": "float32"}), b)
    assert main(["merge", str(a), str(b), "-o", str(tmp_path / "all.nc")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("iotune: error: cannot merge: workload.dtype differs ('int16' in ")
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "all.nc").exists()


def test_cli_wants_a_netcdf_output(tmp_path: Path, capsys) -> None:
    assert main(["merge", "a.nc", "b.nc", "-o", str(tmp_path / "all.zarr")]) == 2
    assert "must end in .nc" in capsys.readouterr().err


def _measured_baselines(ds, value: float, labels: tuple[str, ...]):
    """``ds`` with its ``labels`` baselines measured at ``value`` MiB/s (the rest pending)."""
    ds = ds.copy(deep=True)
    for label in labels:
        ds["baseline_status"].loc[{"baseline": label}] = "ok"
        ds["baseline_read_MiBps"].loc[{"baseline": label}] = value
    return ds


def test_the_baselines_are_kept_beside_the_merged_grid(tmp_path: Path, fake_results) -> None:
    a = _measured_baselines(fake_results({"parameters.chunk_cache": "1MiB"}, seed=1), 5.0, ())
    b = fake_results({"parameters.chunk_cache": "64MiB"}, seed=2)
    b = _measured_baselines(b, 7.0, ("library",))
    assert list(a["baseline"].values) == ["library", "balanced"]  # quick.yaml's
    m = merge([a, b])
    assert "baseline" not in m["read_MiBps"].dims  # the grid keeps its own dims
    assert list(m["baseline"].values) == ["library", "balanced"]
    # library: pending in a, measured in b, so b's; balanced: measured by neither
    assert list(m["baseline_status"].values) == ["ok", "pending"]
    assert (m["baseline_read_MiBps"].sel(baseline="library") == 7.0).all()
    save(m, tmp_path / "merged.nc")
    again = open_results(tmp_path / "merged.nc")
    assert list(again["baseline_status"].values) == ["ok", "pending"]
