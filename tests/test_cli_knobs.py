"""File-level knobs from the command line: listed, swept, read back, refused, recommended."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import xarray as xr


def iotune(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=cwd)


SPEC = """version: 1
name: {name}
workload: {{shape: {{time: 8, y: 64, x: 64}}, dtype: float32, field: smooth}}
backend: {backend}
parameters: {parameters}
read: {{patterns: [full, spatial]}}
measure: {{repeats: 2}}
"""


def spec(tmp_path: Path, name: str, backend: str, parameters: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(SPEC.format(name=name, backend=backend, parameters=parameters))
    return path


def test_backends_lists_each_knob_under_its_format(tmp_path: Path) -> None:
    out = iotune("backends", cwd=tmp_path).stdout
    # the name column is as wide as the longest backend name
    assert re.search(r"\n  posix +format: transfer_size\n +file system: preallocate, direct,", out)
    assert re.search(r"\n  mpiio +format: transfer_size\n +parallel: nprocs, bytes_per_rank,", out)
    assert re.search(
        r"\n  object +parallel: request_concurrency\n +object store: part_size, coalesce\n", out
    )
    listed = iotune("backends", "--format", "json", cwd=tmp_path).stdout
    by_name = {b["name"]: set(b["parameters"]) for b in json.loads(listed)["backends"]}
    assert {"alignment", "page_size", "fill_time", "cache_slots"} <= by_name["h5py"]
    assert {"fill", "format", "quantize", "alignment"} <= by_name["netcdf4"]
    assert {"request_concurrency", "write_empty_chunks", "shard_index"} <= by_name["zarr"]
    assert {"cb_nodes", "stripe_size_hint"} <= by_name["mpiio"]
    assert "page_size" not in by_name["netcdf4"]  # netCDF-C cannot set it


def test_a_knob_the_format_lacks_is_one_line(tmp_path: Path) -> None:
    alone = spec(tmp_path, "alone", "netcdf4", "{page_size: 4MiB}")
    done = iotune("validate", alone, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "parameters.page_size" in done.stderr and "allowed:" in done.stderr
    # in a multi-format sweep it is a recorded note, and the trial still runs
    both = spec(tmp_path, "both", "[netcdf4, h5py]", "{chunks: [[4, 32, 32]], page_size: 4MiB}")
    assert iotune("run", both, "-o", "both", cwd=tmp_path).returncode == 0
    ds = xr.open_dataset(tmp_path / "both" / "results.nc")
    props = {
        b: json.loads(str(ds["file_properties"].sel(backend=b).values.ravel()[0]))
        for b in ("netcdf4", "h5py")
    }
    assert props["h5py"]["file_space_page_size"] == 4 * 2**20
    assert "file_space_page_size" not in props["netcdf4"]


def test_quantisation_costs_are_stored_and_gate_the_recommendation(tmp_path: Path) -> None:
    path = spec(
        tmp_path,
        "lossy",
        "netcdf4",
        "{chunks: [[4, 32, 32]], codec: zlib, level: 1, shuffle: byte, "
        "quantize: [off, bitround:6]}",
    )
    assert iotune("run", path, "-o", "lossy", cwd=tmp_path).returncode == 0
    ds = xr.open_dataset(tmp_path / "lossy" / "results.nc")
    error = ds["max_abs_error"].sel(quantize="bitround:6").item()
    assert 0 < error < 300 * 2.0**-6  # values near 280: half a unit of the 6th bit
    assert np.isnan(ds["max_abs_error"].sel(quantize="off").item())
    assert ds["ratio"].sel(quantize="bitround:6").item() > ds["ratio"].sel(quantize="off").item()

    def winner(*limits: str) -> str:
        done = iotune(
            "recommend",
            "lossy",
            "--objective",
            "write",
            "--max-ratio-loss",
            "0",
            "--format",
            "json",
            *limits,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["winner"]["settings"]["quantize"]

    assert winner() == "off"  # never lossy without a stated limit
    assert winner("--max-error", "10") == "bitround:6"
    assert winner("--min-digits", "6") == "off"  # bitround:6 keeps fewer
    bad = iotune("recommend", "lossy", "--min-digits", "many", cwd=tmp_path)
    assert bad.returncode == 2 and "--min-digits" in bad.stderr

    def searched(*limits: str) -> str:  # a search replayed over the grid gates alike
        argv = ["tune", "--replay", "lossy", "--objective", "write", "--max-ratio-loss", "0"]
        done = iotune(*argv, "--budget", "3", "-o", "tuned", *limits, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "quantize=off" in searched()
    assert "quantize=bitround:6" in searched("--max-error", "10")


def test_posix_knobs_are_read_back_from_the_kernel(tmp_path: Path) -> None:
    path = spec(
        tmp_path,
        "posix",
        "posix",
        "{transfer_size: 64KiB, direct: [off, on], sync: [fsync, dsync], fadvise: random}",
    )
    assert iotune("run", path, "-o", "posix", cwd=tmp_path).returncode == 0
    ds = xr.open_dataset(tmp_path / "posix" / "results.nc")
    assert set(ds["status"].values.ravel()) == {"ok"}
    for direct in ("off", "on"):
        for sync in ("fsync", "dsync"):
            one = ds["file_properties"].sel(direct=direct, sync=sync).item()
            props = json.loads(one)
            assert props["direct"] == direct and props["o_dsync"] == (sync == "dsync")
            assert props["fadvise"] == "random"
