"""End-to-end runs of the ``iotune`` command on real netCDF4 files."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

pytestmark = pytest.mark.slow


def iotune(*args: str | Path, check: bool = False, **kw) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "iotune", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=600, **kw)


ACCEPTANCE = {
    "name": "acceptance",
    "workload": {"shape": {"time": 64, "y": 128, "x": 128}},
    "parameters": {
        "chunks": [[64, 16, 16], [8, 64, 64], [1, 128, 128]],
        "codec": ["none", "zlib", "blosc-lz4", "bzip2"],
        "level": 4,
        "chunk_cache": ["1MiB", "64MiB"],
    },
    "read": {"patterns": ["full", "spatial", "timeseries"], "timeseries": {"pixels": 8}},
    "measure": {"repeats": 2},
}


@pytest.fixture(scope="module")
def acceptance_run(tmp_path_factory, small_spec):
    import yaml

    tmp = tmp_path_factory.mktemp("acceptance")
    spec = tmp / "spec.yaml"
    spec.write_text(yaml.safe_dump(small_spec(ACCEPTANCE)))
    proc = iotune("run", spec, "-o", tmp / "out", "--plot")
    return tmp / "out", proc


def test_run_writes_results_with_the_documented_schema(acceptance_run):
    out, proc = acceptance_run
    assert proc.returncode == 0, proc.stderr
    assert "best configuration" in proc.stdout and "read:timeseries" in proc.stdout
    ds = xr.open_dataset(out / "results.nc")
    assert {"chunks", "codec", "chunk_cache", "pattern", "repeat"} <= set(ds.dims)
    for var in ("write_MiBps", "read_MiBps", "file_bytes", "ratio", "resident_fraction", "status"):
        assert var in ds
    assert set(ds["status"].values.ravel()) == {"ok"}
    assert list(ds["chunks"].values) == ["64x16x16", "8x64x64", "1x128x128"]
    assert ds.attrs["provenance_scratch_fs_type"] not in ("", "unknown")
    assert ds.attrs["provenance_version_netCDF4"]
    assert "chunk_cache" in ds.attrs["spec"]
    ds.close()
    assert sorted(p.name for p in out.glob("*.png")) == sorted(
        [
            "write.png",
            "read-full.png",
            "read-spatial.png",
            "read-timeseries.png",
            "size-vs-write.png",
            "size-vs-read-full.png",
            "size-vs-read-spatial.png",
            "size-vs-read-timeseries.png",
            "heatmap-write.png",
            "heatmap-read.png",
            "noise.png",
        ]
    )
    assert not list(out.glob("iotune-scratch-*"))


def test_cold_reads_are_cold(acceptance_run):
    ds = xr.open_dataset(acceptance_run[0] / "results.nc")
    assert float(ds["resident_fraction"].max()) <= 0.05
    assert set(ds["read_cache"].values.ravel()) == {"cold"}


def test_compression_ratios_order_like_on_real_fields(acceptance_run):
    ratio = xr.open_dataset(acceptance_run[0] / "results.nc")["ratio"].median(
        ["chunks", "chunk_cache"]
    )
    r = {c: float(ratio.sel(codec=c)) for c in ratio["codec"].values}
    assert r["bzip2"] > r["zlib"] > r["blosc-lz4"] > 1.1
    assert r["none"] == pytest.approx(1, abs=0.05)


def test_time_series_reads_favour_chunks_long_in_time(acceptance_run):
    ds = xr.open_dataset(acceptance_run[0] / "results.nc")
    ts = ds["read_s"].sel(pattern="timeseries", chunk_cache=2**20).median("repeat")
    for codec in ("zlib", "bzip2"):
        long, flat = ts.sel(codec=codec, chunks="64x16x16"), ts.sel(codec=codec, chunks="1x128x128")
        assert float(long) < float(flat) / 2


def test_show_and_plot_read_the_results(acceptance_run, tmp_path):
    out = acceptance_run[0]
    shown = iotune("show", out)
    assert shown.returncode == 0, shown.stderr
    assert "1x128x128" in shown.stdout and "read:spatial" in shown.stdout
    plotted = iotune("plot", out / "results.nc", "-o", tmp_path)
    assert plotted.returncode == 0, plotted.stderr
    assert len(list(tmp_path.glob("*.png"))) == 11  # with the noise probes


def test_warm_reads_are_labelled_warm(make_spec, tmp_path):
    spec = make_spec({"measure": {"cache": "warm", "repeats": 1}, "read": {"patterns": ["full"]}})
    assert iotune("run", spec, "-o", tmp_path / "w", "--no-progress").returncode == 0
    ds = xr.open_dataset(tmp_path / "w" / "results.nc")
    assert float(ds["resident_fraction"].min()) > 0.9
    assert set(ds["read_cache"].values.ravel()) == {"warm"}


def test_existing_results_are_kept_unless_resume_or_overwrite(make_spec, tmp_path):
    spec = make_spec({"measure": {"repeats": 1}})
    out = tmp_path / "o"
    assert iotune("run", spec, "-o", out, "--no-progress").returncode == 0
    before = (out / "results.nc").read_bytes()
    again = iotune("run", spec, "-o", out)
    assert again.returncode == 2
    assert "--resume" in again.stderr and "Traceback" not in again.stderr
    assert (out / "results.nc").read_bytes() == before
    resumed = iotune("run", spec, "-o", out, "--resume", "--no-progress")
    assert resumed.returncode == 0 and "4 ok" in resumed.stdout
    assert iotune("run", spec, "-o", out, "--overwrite", "--no-progress").returncode == 0


def _limit_file_size():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1_500_000, 1_500_000))


def test_failing_trials_are_recorded_and_the_sweep_goes_on(make_spec, tmp_path):
    """Uncompressed files exceed the file-size limit and fail; compressed ones fit."""
    spec = make_spec(
        {
            "workload": {"shape": {"time": 64, "y": 128, "x": 128}},
            "parameters": {"chunks": [8, 64, 64], "codec": ["none", "bzip2", "zlib"]},
            "measure": {"repeats": 1},
        }
    )
    proc = iotune("run", spec, "-o", tmp_path / "o", "--no-progress", preexec_fn=_limit_file_size)
    assert proc.returncode == 1, proc.stderr
    ds = xr.open_dataset(tmp_path / "o" / "results.nc")
    assert ds["status"].sel(codec="none").item() == "failed"
    assert "file size limit reached" in ds["error"].sel(codec="none").item()
    assert ds["status"].sel(codec="bzip2").item() == "ok"
    assert ds["status"].sel(codec="zlib").item() == "ok"
    assert np.isnan(ds["write_MiBps"].sel(codec="none")).all()
    assert not list((tmp_path / "o").glob("iotune-scratch-*"))


def _children(pid: int) -> list[int]:
    tasks = Path(f"/proc/{pid}/task")
    return [int(c) for t in tasks.iterdir() for c in (t / "children").read_text().split()]


def _journal_ids(path: Path) -> list[str]:
    lines = path.read_text().splitlines()[1:]
    return [json.loads(line)["id"] for line in lines]


def test_kill_9_then_resume_measures_every_trial_exactly_once(make_spec, tmp_path):
    spec = make_spec(
        {
            "workload": {"shape": {"time": 32, "y": 128, "x": 128}},
            "parameters": {
                "codec": ["none", "zlib", "bzip2"],
                "chunks": [[8, 64, 64], [32, 16, 16], [1, 128, 128]],
            },
            # whole trials per journal line (interleaved resume: tests/runner/test_schedule.py)
            "measure": {"repeats": 2, "order": "sequential", "noise_probes": 0},
        }
    )
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = out / "journal.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    workers = _children(proc.pid)
    assert workers, "the serial executor runs trials in a worker process"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()], "orphaned workers"
    before = _journal_ids(journal)
    assert 2 <= len(before) < 9, "the run should be killed mid-sweep"
    resumed = iotune("run", spec, "-o", out, "--resume", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    after = _journal_ids(journal)
    assert len(after) == len(set(after)) == 9
    assert after[: len(before)] == before
    ds = xr.open_dataset(out / "results.nc")
    assert set(ds["status"].values.ravel()) == {"ok"}
    assert not list(out.glob("iotune-scratch-*"))


def test_a_second_run_on_the_same_output_is_refused(make_spec, tmp_path):
    spec = make_spec(
        {
            "workload": {"shape": {"time": 64, "y": 256, "x": 256}},
            "parameters": {"codec": "bzip2", "chunks": [1, 256, 256]},
            "measure": {"repeats": 3},
        }
    )
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out), "--no-progress"]
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (out / "journal.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = iotune("run", spec, "-o", out, "--resume")
        assert second.returncode == 2
        assert "in use by another iotune run" in second.stderr
    finally:
        first.kill()
        first.wait()


def test_scratch_must_exist_and_only_iotunes_own_directory_is_removed(make_spec, tmp_path):
    spec = make_spec({"measure": {"repeats": 1}, "parameters": {"codec": "none"}})
    bad = iotune("run", spec, "-o", tmp_path / "o", "--scratch", tmp_path / "nope")
    assert bad.returncode == 2 and "--scratch" in bad.stderr
    scratch = tmp_path / "mine"
    scratch.mkdir()
    (scratch / "keep.txt").write_text("user data")
    ok = iotune("run", spec, "-o", tmp_path / "o2", "--scratch", scratch, "--no-progress")
    assert ok.returncode == 0, ok.stderr
    assert [p.name for p in scratch.iterdir()] == ["keep.txt"]


@pytest.fixture
def small_tmpfs(tmpfs):
    """A 1.5 MiB tmpfs: a real ENOSPC, as on a full scratch file system."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the RLIMIT_FSIZE test covers the path")
    return tmpfs("1536k", name="full")


@pytest.mark.parametrize("executor", ["serial", "dask"])
def test_disk_full_fails_the_trial_cleans_scratch_and_goes_on(
    make_spec, tmp_path, small_tmpfs, executor
):
    """Uncompressed 2 MiB files hit ENOSPC on the 1.5 MiB tmpfs; compressed ones fit.

    ``--force``: the check before the first trial would refuse the sweep.
    """
    spec = make_spec(
        {
            "workload": {"shape": {"time": 32, "y": 128, "x": 256}},
            "parameters": {"chunks": [8, 64, 64], "codec": ["none", "zlib", "bzip2"]},
            "measure": {"repeats": 1},
        }
    )
    out = tmp_path / "o"
    extra = ["--executor", "dask", "--workers", "1"] if executor == "dask" else []
    options = ("--scratch", small_tmpfs, "--no-progress", "--force", *extra)
    proc = iotune("run", spec, "-o", out, *options)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    ds = xr.open_dataset(out / "results.nc")
    assert ds["status"].sel(codec="none").item() == "failed"
    error = ds["error"].sel(codec="none").item()
    assert "no space left on the scratch file system" in error, error
    assert ds["status"].sel(codec="zlib").item() == "ok"
    assert ds["status"].sel(codec="bzip2").item() == "ok"
    assert list(small_tmpfs.iterdir()) == []  # scratch cleaned, also after the failure


def test_every_file_a_run_writes_honours_the_umask(tmp_path, make_spec):
    """Colleagues on a shared file system can read what iotune wrote under umask 022."""
    spec = make_spec({"baselines": ["library"]})

    def umask_022() -> None:
        os.umask(0o022)

    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(tmp_path / "out"), "--plot"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, preexec_fn=umask_022)
    assert proc.returncode == 0, proc.stderr
    written = [p for p in (tmp_path / "out").rglob("*")]
    assert any(p.name == "results.nc" for p in written)
    assert any(p.suffix == ".png" for p in written)
    for path in written:
        mode = path.stat().st_mode & 0o777
        expected = 0o755 if path.is_dir() else 0o644
        assert mode == expected, f"{path.relative_to(tmp_path)}: {oct(mode)}, not {oct(expected)}"


def test_a_library_refusal_is_one_line_per_reason_not_the_libraries_stderr(tmp_path):
    """netCDF-C's blosc filter fails on chunks it cannot shrink and prints a line per chunk.

    The terminal gets one line per reason with the settings the failed points share and
    what exit 1 means; the trial's record keeps the cause and the library's own words.
    """
    import yaml

    spec = {
        "version": 1,
        "name": "noisy",
        "workload": {"shape": {"time": 8, "y": 64, "x": 64}, "dtype": "float32", "field": "random"},
        "parameters": {
            "chunks": [[8, 16, 16]],
            "codec": ["blosc-lz4"],
            "shuffle": ["none", "byte"],
        },
        "read": {"patterns": ["full"]},
        "measure": {"repeats": 1, "cache": "warm", "fsync": False},
    }
    (tmp_path / "noisy.yaml").write_text(yaml.safe_dump(spec))
    proc = iotune("run", tmp_path / "noisy.yaml", "-o", tmp_path / "out", "--no-progress")
    assert proc.returncode == 1, proc.stderr
    cause = (
        "netCDF-C's blosc filter cannot store a chunk that blosc does not shrink "
        "(noisy data without shuffle); use shuffle=byte or another codec"
    )
    assert proc.stderr.splitlines() == [
        f"iotune: 1 trial failed: {cause} (shuffle=none)",
        "iotune: exit 1: 1 of 2 grid points failed; the others are measured "
        "(iotune show lists every reason)",
    ]
    ds = xr.open_dataset(tmp_path / "out" / "results.nc")
    error = str(ds["error"].sel(shuffle="none").values.ravel()[0])
    assert error.startswith(cause)
    assert "[library said: Blosc_Filter Error: blosc_filter: Buffer is uncompressible." in error


def test_show_numbers_each_reason_once_below_the_table(tmp_path):
    """A long reason would pad every row's status column: it is a numbered note instead."""
    import yaml

    spec = {
        "version": 1,
        "name": "noisy",
        "workload": {"shape": {"time": 8, "y": 64, "x": 64}, "dtype": "float32", "field": "random"},
        "parameters": {
            "chunks": [[8, 16, 16], [1, 64, 64]],
            "codec": ["blosc-lz4"],
            "shuffle": ["none", "byte"],
        },
        "read": {"patterns": ["full"]},
        "measure": {"repeats": 1, "cache": "warm", "fsync": False},
    }
    (tmp_path / "noisy.yaml").write_text(yaml.safe_dump(spec))
    assert iotune("run", tmp_path / "noisy.yaml", "-o", tmp_path / "out").returncode == 1
    lines = iotune("show", tmp_path / "out", check=True).stdout.splitlines()
    assert max(map(len, lines)) <= 100
    failed = [line for line in lines if " none " in line]
    assert len(failed) == 2 and all(line.endswith("failed (1)") for line in failed)
    notes = [line for line in lines if line.startswith("(1) ")]
    assert len(notes) == 1 and notes[0].startswith("(1) netCDF-C's blosc filter cannot store")


def test_the_progress_bar_counts_trials(tmp_path, make_spec):
    """Repeats run interleaved as separate tasks; the bar still counts what the plan lists."""
    spec = make_spec({"measure": {"repeats": 2}, "baselines": ["library"]})
    plan = json.loads(iotune("plan", spec, "--format", "json", check=True).stdout)
    n = len(plan["trials"])
    proc = iotune("run", spec, "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert f"{n}/{n} trials" in proc.stderr
    assert "task" not in proc.stderr


def test_a_swept_value_that_applies_nowhere_is_named_once_with_why(tmp_path):
    import yaml

    spec = {
        "version": 1,
        "name": "nowhere",
        "workload": {"shape": {"time": 8, "y": 32, "x": 32}, "dtype": "float32"},
        "parameters": {
            "chunks": [[8, 16, 16]],
            "codec": ["zlib", "zstd"],
            "shuffle": ["none", "bit"],
        },
        "read": {"patterns": ["full"]},
        "measure": {"repeats": 1, "cache": "warm", "fsync": False},
    }
    (tmp_path / "nw.yaml").write_text(yaml.safe_dump(spec))
    ran = iotune("run", tmp_path / "nw.yaml", "-o", tmp_path / "out", "--no-progress", check=True)
    line = "shuffle=bit: applies nowhere: bit shuffle is available only with blosc codecs"
    said = [x.strip() for x in ran.stdout.splitlines() if "applies nowhere" in x]
    assert len(said) == 1 and said[0].startswith(line)
    shown = iotune("show", tmp_path / "out", check=True).stdout.splitlines()
    assert sum(x.startswith(line) for x in shown) == 1
    # plan names it once too, in place of a line per grid point it would have had
    planned = iotune("plan", tmp_path / "nw.yaml", check=True).stdout.splitlines()
    assert [x.split("  ")[-1] for x in planned if "shuffle=bit" in x] == [said[0]]
    as_json = iotune("plan", tmp_path / "nw.yaml", "--format", "json", check=True).stdout
    (named,) = json.loads(as_json)["applies_nowhere"]
    assert named["parameter"] == "shuffle" and named["value"] == "bit"
    assert said[0] == f"shuffle=bit: applies nowhere: {named['reason']}"


def test_run_and_show_say_the_pick_with_its_cost_the_same_way(make_spec, tmp_path):
    """What recommend says first, after the counts of run and after the table of show."""
    spec = make_spec({"measure": {"repeats": 2}, "baselines": ["library"]})
    ran = iotune("run", spec, "-o", tmp_path / "out", "--no-progress", check=True).stdout
    lines = ran.splitlines()
    pick = lines[1 : lines.index("best configuration (median of repeats):")]
    picked = ("recommended for read:timeseries: ", "keep your settings (library")
    start = next(i for i, x in enumerate(pick) if x.startswith(picked))
    # a noisy run says first that its repeats cannot decide (issue 44), then the fastest
    assert start == 0 or pick[0].startswith("cannot decide at this noise: "), pick
    head = next(x for x in pick if x.startswith("  against "))
    assert head.startswith("  against library (chunks=contiguous codec=none), 95% intervals: ")
    said = " ".join(x.strip() for x in pick)
    for metric in ("write", "read:full", "read:spatial", "read:timeseries"):
        assert re.search(rf" {metric} [\d.]+x \[[\d.]+x to [\d.]+x\]", said), metric
    costs = " ".join(x.strip() for x in pick[:-2])
    assert re.search(r" size [\d.]+x$", costs)
    assert pick[-2:] == [
        "  objective: read:timeseries (the built-in default; pass --objective to choose)",
        "  (more: iotune recommend --objective read:timeseries)",
    ]
    assert max(map(len, pick)) <= 100
    shown = iotune("show", tmp_path / "out", check=True).stdout
    assert "\n".join(pick) in shown
    first = iotune("recommend", tmp_path / "out", check=True).stdout.splitlines()[0]
    assert pick[0].startswith("recommended") or said.startswith(first)
