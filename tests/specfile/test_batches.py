"""``read.batches`` and the loader knobs: parsed, defaulted, refused in one line (exit 2)."""

from __future__ import annotations

import pytest

from iotune.model.spec import BatchSpec, ReadSpec
from iotune.specfile.parse import load_spec_text
from tests.test_cli_errors import assert_usage_error, iotune, write_spec

HEAD = "version: 1\nworkload: {shape: {time: 16, y: 32, x: 32}}\nbackend: netcdf4\n"


def test_batches_is_configured_by_read_batches() -> None:
    sweep = load_spec_text(
        HEAD + "parameters: {workers: [0, 2], prefetch: [2]}\n"
        "read: {patterns: [full, batches], batches: "
        "{sample: {time: 2, y: 16}, batch: 4, batches: 2, shuffle: false}}\n"
    )
    assert sweep.read.batches == BatchSpec((("time", 2), ("y", 16)), 4, 2, False)
    assert [p.name for p in sweep.swept] == ["workers", "prefetch"]


def test_batches_alone_draws_one_step_per_sample() -> None:
    sweep = load_spec_text(HEAD + "read: {patterns: [batches], batches: {batch: 4, batches: 4}}\n")
    assert sweep.read.batches == BatchSpec((("time", 1),), 4, 4, True)


def test_sweeps_without_batches_keep_their_read_and_digest() -> None:
    sweep = load_spec_text(HEAD + "read: {patterns: [full]}\n")
    assert sweep.read.batches is None
    assert repr(sweep.read) == repr(ReadSpec())  # the digest hashes this repr
    with_batches = load_spec_text(
        HEAD + "read: {patterns: [full, batches], batches: {batch: 2, batches: 2}}\n"
    )
    other = load_spec_text(
        HEAD + "read: {patterns: [full, batches], batches: {batch: 2, batches: 3}}\n"
    )
    assert with_batches.digest() != other.digest()


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"read.batches": {"sample": {"z": 1}}}, ("read.batches.sample.z", "allowed")),
        ({"read.batches": {"sample": {"time": 0}}}, ("read.batches.sample.time", ">= 1")),
        ({"read.batches": {"sample": {"time": 17}}}, ("read.batches.sample.time", "<= 16")),
        ({"read.batches": {"sample": {}}}, ("read.batches.sample", "names no dimension")),
        ({"read.batches": {"batch": 0}}, ("read.batches.batch", ">= 1")),
        ({"read.batches": {"batches": "many"}}, ("read.batches.batches", "integer")),
        ({"read.batches": {"shuffle": "yes"}}, ("read.batches.shuffle", "true, false")),
        ({"read.batches": {"size": 3}}, ("read.batches.size", "unknown key")),
        (
            {"read.batches": {"batch": 8, "batches": 3}},
            ("read.batches", "24 samples", "holds 16 samples of 1x32x32", "at most 16"),
        ),
        ({"parameters.workers": [-1, 2]}, ("parameters.workers[0]", ">= 0")),
        ({"parameters.prefetch": 0}, ("parameters.prefetch", ">= 1")),
    ],
    ids=lambda v: "-".join(map(str, v)) if isinstance(v, tuple) else None,
)
def test_a_broken_batches_section_is_one_line(tmp_path, changed_spec, changes, words) -> None:
    valid = {"read.patterns": ["full", "batches"], "read.batches": {"batch": 2, "batches": 2}}
    spec = changed_spec({**valid, **changes})
    proc = iotune("validate", write_spec(tmp_path / "spec.yaml", spec), cwd=tmp_path)
    assert_usage_error(proc, *words)


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"read.batches": {"batch": 2}}, ("read.batches", "add batches to read.patterns")),
        ({"parameters.workers": [0, 2]}, ("parameters.workers", "only to the batches")),
        ({"parameters.prefetch": 2}, ("parameters.prefetch", "only to the batches")),
    ],
)
def test_batches_settings_without_the_pattern_are_refused_before_anything_is_made(
    tmp_path, changed_spec, changes, words
) -> None:
    out = tmp_path / "out"
    proc = iotune(
        "run", write_spec(tmp_path / "spec.yaml", changed_spec(changes)), "-o", out, cwd=tmp_path
    )
    assert_usage_error(proc, *words)
    assert not out.exists()


def test_prefetch_without_workers_and_workers_in_memory_do_not_apply() -> None:
    from iotune.runner.plan import make_plan

    sweep = load_spec_text(
        "version: 1\nworkload: {shape: {time: 16, y: 32, x: 32}}\nbackend: [netcdf4, memory]\n"
        "parameters: {workers: [0, 2], prefetch: [2, 4]}\n"
        "read: {patterns: [batches], batches: {batch: 4, batches: 2}}\n"
    )
    plan = make_plan(sweep)
    # netcdf4: workers 0 once (prefetch 2 and 4 are the same trial), workers 2 twice;
    # memory: workers 0 once
    assert len(plan.trials) == 4
    reasons = {tuple(p.coords.values()): p.reason for p in plan.points if not p.applicable}
    assert "prefetch does not apply with workers 0" in reasons[("netcdf4", 0, 4)]
    assert "measured at backend=netcdf4, workers=0, prefetch=2" in reasons[("netcdf4", 0, 4)]
    assert "loader workers cannot read" in reasons[("memory", 2, 2)]
    params = {t.id: t.params for t in plan.trials}
    assert all(p["prefetch"] is None for p in params.values() if p["workers"] == 0)


def test_a_fidelity_too_small_for_the_batches_is_refused() -> None:
    from iotune.core.errors import SpecError

    text = HEAD + "parameters: {fidelity: [FID, 1]}\n"
    text += "read: {patterns: [batches], batches: {batch: 4, batches: 2}}\n"
    assert load_spec_text(text.replace("FID", "0.5")).read.batches is not None  # 8 of 8
    with pytest.raises(SpecError, match=r"parameters\.fidelity: 0\.25 keeps 4 samples.* needs 8"):
        load_spec_text(text.replace("FID", "0.25"))
