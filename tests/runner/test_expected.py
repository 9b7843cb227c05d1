"""Expected task costs: a codec probe on the workload's data orders trials by cost."""

from __future__ import annotations

import pytest

from iotune.model.records import Trial, TrialResult, TrialTask
from iotune.runner.expected import Expected, codec_key, probe_codecs
from iotune.specfile.parse import load_spec_text

SPEC = """\
version: 1
name: codecs
workload: {shape: {time: 16, y: 128, x: 128}, dtype: int16}
backend: memory
parameters: {codec: [blosc-lz4, bzip2], level: [1, 9]}
read: {patterns: [full, timeseries]}
measure: {repeats: 2}
"""


def tasks() -> list[TrialTask]:
    from iotune.runner.plan import make_plan

    sweep = load_spec_text(SPEC)
    plan = make_plan(sweep)
    return [TrialTask(t, sweep.workload, sweep.read, sweep.measure, "/tmp") for t in plan.trials]


def test_bzip2_at_level_9_is_expected_to_cost_more_than_blosc_lz4_at_level_1():
    todo = tasks()
    expected = Expected.of_tasks(todo[0].workload, [t.trial.params for t in todo])
    by_codec = {codec_key(t.trial.params)[:2]: expected.seconds(t) for t in todo}  # type: ignore[index]
    assert by_codec[("bzip2", 9)] > 5 * by_codec[("blosc-lz4", 1)]


def test_a_probe_leaves_out_codecs_it_cannot_build_and_measures_the_rest():
    workload = tasks()[0].workload
    got = probe_codecs(workload, [("zlib", 1, "none"), ("no-such-codec", 1, "none")])
    assert list(got) == [("zlib", 1, "none")] and got[("zlib", 1, "none")] > 0


def test_what_finished_tasks_measured_reorders_the_rest():
    task = tasks()[0]
    expected = Expected({("zlib", 1, "none"): 1e-9, ("zstd", 1, "none"): 2e-9})

    def make(trial_id: str, codec: str) -> TrialTask:
        trial = Trial(trial_id, "memory", {"codec": codec, "level": 1})
        return TrialTask(trial, task.workload, task.read, task.measure, "/tmp")

    zlib, zstd = make("a", "zlib"), make("b", "zstd")
    assert expected.seconds(zlib) < expected.seconds(zstd)
    before = expected.seconds(zstd)
    expected.observe(zstd, TrialResult("b", "ok", started=0.0, ended=before))
    expected.observe(zlib, TrialResult("a", "ok", started=0.0, ended=100.0))
    assert expected.seconds(zlib) == pytest.approx(100.0)  # its codec's tasks took that long
    assert expected.seconds(zstd) == pytest.approx(before)
    expected.observe(zlib, TrialResult("a", "failed", started=0.0, ended=1e6))  # says nothing
    assert expected.seconds(zlib) == pytest.approx(100.0)


def test_a_probe_of_a_workload_with_huge_planes_stays_about_a_mebibyte():
    import dataclasses
    import time

    workload = dataclasses.replace(tasks()[0].workload, shape=(2, 32768, 32768))  # 2 GiB planes
    t0 = time.perf_counter()
    got = probe_codecs(workload, [("zlib", 1, "none")])
    assert got[("zlib", 1, "none")] > 0 and time.perf_counter() - t0 < 10


def test_a_workload_from_a_missing_file_is_probed_on_the_smooth_field_of_its_shape(tmp_path):
    import dataclasses

    workload = dataclasses.replace(
        tasks()[0].workload, field="file", path=str(tmp_path / "gone.nc"), variable="t"
    )
    assert probe_codecs(workload, [("zlib", 1, "none")])[("zlib", 1, "none")] > 0
