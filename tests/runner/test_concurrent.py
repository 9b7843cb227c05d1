import subprocess
import sys
import textwrap

import pytest

from iotune.core.errors import SpecError
from iotune.model.records import TrialTask
from iotune.results.dataset import to_dataset
from iotune.runner.concurrent import _combine
from iotune.runner.plan import make_plan
from iotune.runner.trial import run_trial
from iotune.specfile.parse import load_spec_text

MiB = 2**20

SPEC = """
version: 1
workload: {shape: {time: 16, y: 128, x: 128}}
backend: BACKEND
parameters: {chunks: [4, 64, 64], codec: zlib, concurrency: N}
read: {patterns: [full, spatial]}
measure: {repeats: 2}
"""


def spec(backend="netcdf4", n="[1, 3]"):
    text = SPEC.replace("BACKEND", backend).replace("N", n)
    if backend == "posix":
        text = text.replace("chunks: [4, 64, 64], codec: zlib, ", "")
    return load_spec_text(text)


def run(tmp_path, sweep):
    plan = make_plan(sweep)
    done = {}
    for trial in plan.trials:
        task = TrialTask(trial, sweep.workload, sweep.read, sweep.measure, str(tmp_path))
        done[trial.id] = run_trial(task)
    return plan, done


def test_combined_entry_counts_all_bytes_over_the_slowest_process():
    runs = [
        {"s": 1.0, "cpu_s": 0.5, "bytes": MiB, "ops": 4},
        {"s": 2.0, "cpu_s": 0.7, "bytes": MiB, "ops": 4},
    ]
    entry = _combine(runs, None)
    assert entry["MiBps"] == pytest.approx(1.0)  # 2 MiB in 2 s
    assert entry["per_process_MiBps"] == pytest.approx(0.75)  # median of 1 and 0.5
    assert entry["cpu_s"] == pytest.approx(1.2)
    assert entry["bytes"] == 2 * MiB and entry["processes"] == 2
    assert entry["ops_per_s"] == pytest.approx(4.0)
    writes = _combine([{"s": 0.5, "cpu_s": 0.1}, {"s": 1.0, "cpu_s": 0.1}], 4 * MiB)
    assert writes["MiBps"] == pytest.approx(8.0) and "bytes" not in writes


@pytest.mark.parametrize("backend", ["netcdf4", "posix"])
def test_concurrent_trial_measures_aggregate_and_per_process(tmp_path, backend):
    sweep = spec(backend)
    plan, done = run(tmp_path, sweep)
    ds = to_dataset(plan, done)
    assert list(ds.concurrency.values) == [1, 3]
    assert (ds.status == "ok").all(), ds.error.values
    three = ds.sel(concurrency=3)
    raw = 16 * 128 * 128 * 2 / MiB
    # aggregate: three files' bytes over the slowest writer
    assert three.write_MiBps.values == pytest.approx(3 * raw / three.write_s.values)
    # every process is at least as fast as the slowest, whose time sets the aggregate
    assert (three.write_MiBps_per_process >= three.write_MiBps / 3 * 0.9999).all()
    full = three.sel(pattern="full")
    assert int(full.read_bytes) == 3 * 16 * 128 * 128 * 2
    assert (full.read_cache == "cold").all() and (full.resident_fraction <= 0.05).all()
    one = ds.sel(concurrency=1)
    assert one.write_MiBps_per_process.values == pytest.approx(one.write_MiBps.values)
    assert list(tmp_path.iterdir()) == []


def test_concurrent_trials_are_distinct_trials_with_stable_ids():
    plan = make_plan(spec())
    assert len(plan.trials) == 2
    assert [t.params["concurrency"] for t in plan.trials] == [1, 3]
    assert make_plan(spec()).trials == plan.trials


@pytest.mark.parametrize("bad", ["0", "[1, 1]", "'two'", "1000"])
def test_bad_concurrency_names_the_field(bad):
    with pytest.raises(SpecError, match=r"parameters\.concurrency"):
        spec(n=bad)


def test_a_failing_concurrent_writer_fails_the_trial_with_its_reason(tmp_path):
    """Files beyond RLIMIT_FSIZE fail with EFBIG in the children, which inherit the limit."""
    script = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
        from iotune.runner.plan import make_plan
        from iotune.specfile.parse import load_spec_text
        from iotune.model.spec import MeasureSpec
        from iotune.model.records import TrialTask
        from iotune.runner.trial import run_trial
        sweep = load_spec_text({SPEC.replace("BACKEND", "netcdf4").replace("N", "2")!r})
        (trial,) = make_plan(sweep).trials
        t = TrialTask(trial, sweep.workload, sweep.read, MeasureSpec(repeats=1), {str(tmp_path)!r})
        r = run_trial(t)
        print(r.status)
        print(r.error)
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    status, error = out.stdout.splitlines()[:2]
    assert status == "failed"
    assert error.startswith("ConcurrencyError: process ")
    assert "\n" not in error
    assert list(tmp_path.iterdir()) == []
