import resource
import subprocess
import sys
import textwrap

import pytest

from iotune.run.plan import make_plan
from iotune.run.records import TrialTask
from iotune.run.trial import run_trial
from iotune.spec.model import MeasureSpec, ReadSpec
from iotune.spec.parse import load_spec_text

SPEC = """
version: 1
workload: {shape: {time: 16, y: 128, x: 128}}
parameters: {chunks: [16, 32, 32], codec: zlib}
read: {patterns: [full, spatial, timeseries], timeseries: {pixels: 4}}
"""


def task(tmp_path, *, cache="cold", repeats=2, text=SPEC):
    sweep = load_spec_text(text)
    (trial,) = make_plan(sweep).trials
    measure = MeasureSpec(repeats=repeats, cache=cache)
    return TrialTask(trial, sweep.workload, sweep.read, measure, str(tmp_path))


def test_cold_trial_measures_everything_and_cleans_scratch(tmp_path):
    result = run_trial(task(tmp_path))
    assert result.status == "ok", result.error
    assert len(result.write) == 2
    assert all(w["s"] > 0 and w["MiBps"] > 0 for w in result.write)
    assert set(result.reads) == {"full", "spatial", "timeseries"}
    for runs in result.reads.values():
        assert len(runs) == 2
        assert all(r["cache"] == "cold" and r["resident_fraction"] <= 0.05 for r in runs)
    full = result.reads["full"][0]
    assert full["bytes"] == 16 * 128 * 128 * 2
    assert result.reads["timeseries"][0]["bytes"] == 4 * 16 * 2
    assert 1.3 < result.raw_bytes / result.file_bytes < 4
    assert result.stored["layout"] == "16x32x32"
    assert list(tmp_path.iterdir()) == []


def test_warm_reads_find_the_file_in_the_page_cache(tmp_path):
    result = run_trial(task(tmp_path, cache="warm", repeats=1))
    assert result.status == "ok", result.error
    assert result.reads["full"][0]["cache"] == "warm"
    assert result.reads["full"][0]["resident_fraction"] > 0.9


def test_result_round_trips_through_a_dict(tmp_path):
    result = run_trial(task(tmp_path, repeats=1))
    assert type(result).from_dict(result.to_dict()) == result


def test_a_real_write_failure_is_recorded_and_scratch_is_removed(tmp_path):
    """Files larger than RLIMIT_FSIZE fail with EFBIG, as on a full quota."""
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(tmp_path)!r})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
        from iotune.run.plan import make_plan
        from iotune.spec.parse import load_spec_text
        from iotune.spec.model import MeasureSpec
        from iotune.run.records import TrialTask
        from iotune.run.trial import run_trial
        sweep = load_spec_text({SPEC!r})
        (trial,) = make_plan(sweep).trials
        t = TrialTask(trial, sweep.workload, sweep.read, MeasureSpec(repeats=1), {str(tmp_path)!r})
        r = run_trial(t)
        print(r.status)
        print(r.error)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    status, error = out.stdout.splitlines()[:2]
    assert status == "failed"
    assert "\n" not in error and error
    assert list(tmp_path.iterdir()) == []
    assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] == resource.RLIM_INFINITY


@pytest.mark.parametrize("dtype", ["int16", "float32"])
def test_data_read_back_is_checked(tmp_path, dtype):
    text = SPEC.replace("{time: 16, y: 128, x: 128}", "{time: 16, y: 128, x: 128}, dtype: " + dtype)
    result = run_trial(task(tmp_path, repeats=1, text=text))
    assert result.status == "ok", result.error


def test_read_spec_defaults():
    assert ReadSpec().patterns == ("full",)
