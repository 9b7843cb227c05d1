"""``read.batches`` and the loader knobs: parsed, defaulted, refused in one line (exit 2)."""

from __future__ import annotations

import pytest

from iotune.model.spec import BatchSpec, ReadSpec
from iotune.specfile.parse import load_spec_text
from tests.test_cli_errors import assert_usage_error, iotune, write_spec

HEAD = "version: 1\nworkload: {shape: {time: 16, y: 32, x: 32}}\nbackend: netcdf4\n"


def test_batches_is_configured_by_read_batches() -> None:
    sweep = load_spec_text(
        HEAD + "parameters: {num_workers: [0, 2], prefetch_factor: [2]}\n"
        "read: {patterns: [full, batches], batches: "
        "{sample: {time: 2, y: 16}, batch: 4, batches: 2, shuffle: false}}\n"
    )
    assert sweep.read.batches == BatchSpec((("time", 2), ("y", 16)), 4, 2, False)
    assert [p.name for p in sweep.swept] == ["num_workers", "prefetch_factor"]


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
        ({"parameters.num_workers": [-1, 2]}, ("parameters.num_workers[0]", ">= 0")),
        ({"parameters.prefetch_factor": 0}, ("parameters.prefetch_factor", ">= 1")),
        ({"parameters.pin_memory": "maybe"}, ("parameters.pin_memory", "off, on")),
        (
            {"read.batches": {"loader": "tf"}},
            ("read.batches.loader", "auto, torch, iotune, xbatcher"),
        ),
        ({"read.batches": {"step": "soon"}}, ("read.batches.step", "50ms")),
        ({"read.batches": {"step": "-5ms"}}, ("read.batches.step", "50ms")),
        ({"read.batches": {"device": "tpu"}}, ("read.batches.device", "cpu, cuda")),
        # no GPU here (and, without torch, no torch): refused before anything runs
        (
            {"read.batches": {"batch": 2, "device": "cuda"}},
            ("read.batches.device", "'cuda'", "cpu"),
        ),
        (
            {"read.batches": {"batch": 2, "device": "cuda", "loader": "iotune"}},
            ("read.batches.device", "torch loader", "cpu"),
        ),
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
        ({"parameters.num_workers": [0, 2]}, ("parameters.num_workers", "only to the batches")),
        ({"parameters.prefetch_factor": 2}, ("parameters.prefetch_factor", "only to the batches")),
        ({"parameters.pin_memory": "on"}, ("parameters.pin_memory", "only to the batches")),
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


def test_prefetch_factor_without_workers_and_workers_in_memory_do_not_apply() -> None:
    from iotune.runner.plan import make_plan

    sweep = load_spec_text(
        "version: 1\nworkload: {shape: {time: 16, y: 32, x: 32}}\nbackend: [netcdf4, memory]\n"
        "parameters: {num_workers: [0, 2], prefetch_factor: [2, 4]}\n"
        "read: {patterns: [batches], batches: {batch: 4, batches: 2}}\n"
    )
    plan = make_plan(sweep)
    # netcdf4: num_workers 0 once (prefetch_factor 2 and 4 are the same trial), num_workers 2
    # twice; memory: num_workers 0 once
    assert len(plan.trials) == 4
    reasons = {tuple(p.coords.values()): p.reason for p in plan.points if not p.applicable}
    assert "prefetch_factor does not apply with num_workers 0" in reasons[("netcdf4", 0, 4)]
    measured = "measured at backend=netcdf4, num_workers=0, prefetch_factor=2"
    assert measured in reasons[("netcdf4", 0, 4)]
    assert "loader workers cannot read" in reasons[("memory", 2, 2)]
    params = {t.id: t.params for t in plan.trials}
    assert all(p["prefetch_factor"] is None for p in params.values() if p["num_workers"] == 0)


def test_a_fidelity_too_small_for_the_batches_is_refused() -> None:
    from iotune.core.errors import SpecError

    text = HEAD + "parameters: {fidelity: [FID, 1]}\n"
    text += "read: {patterns: [batches], batches: {batch: 4, batches: 2}}\n"
    assert load_spec_text(text.replace("FID", "0.5")).read.batches is not None  # 8 of 8
    with pytest.raises(SpecError, match=r"parameters\.fidelity: 0\.25 keeps 4 samples.* needs 8"):
        load_spec_text(text.replace("FID", "0.25"))


def test_the_old_loader_knob_names_are_read_with_one_warning_each() -> None:
    from iotune.core.errors import DeprecatedOptionWarning

    text = HEAD + "parameters: {workers: [0, 2], prefetch: 3}\n"
    text += "read: {patterns: [batches], batches: {batch: 2, batches: 2}}\n"
    with pytest.warns(DeprecatedOptionWarning) as caught:
        sweep = load_spec_text(text)
    said = sorted(str(w.message).split(" (")[0] for w in caught)
    assert said == [
        "prefetch is deprecated, use prefetch_factor",
        "workers is deprecated, use num_workers",
    ]
    assert {p.name: p.values for p in sweep.parameters} == {
        "num_workers": (0, 2),
        "prefetch_factor": (3,),
    }
    # the dask executor's workers is no loader knob, and is not renamed
    text += "execution: {executor: dask, workers: 2}\n"
    with pytest.warns(DeprecatedOptionWarning):
        assert load_spec_text(text).execution.workers == 2


@pytest.mark.parametrize(
    ("parameters", "batch", "expected"),
    [
        ("{}", 4, 20),  # in-process reads: at least 20
        ("{num_workers: [0, 2], prefetch_factor: [2, 4]}", 2, 64),  # 8 x 2 x 4
        ("{num_workers: [4], prefetch_factor: 4}", 2, 128),
        ("{num_workers: [4], prefetch_factor: 4}", 8, 32),  # all that 256 steps hold
    ],
)
def test_the_default_number_of_batches_lets_steady_state_dominate(
    parameters, batch, expected
) -> None:
    text = "version: 1\nworkload: {shape: {time: 256, y: 4, x: 4}}\nbackend: netcdf4\n"
    text += f"parameters: {parameters}\n"
    text += f"read: {{patterns: [batches], batches: {{batch: {batch}, step: 50ms}}}}\n"
    spec = load_spec_text(text).read.batches
    assert spec is not None and spec.batches == expected and spec.step == pytest.approx(0.05)


def test_loader_torch_without_torch_is_one_line(tmp_path, changed_spec) -> None:
    import subprocess
    import sys

    spec = changed_spec(
        {"read.patterns": ["batches"], "read.batches": {"batch": 2, "loader": "torch"}}
    )
    path = write_spec(tmp_path / "spec.yaml", spec)
    # as where torch is not installed: the import system finds no torch
    hide = "import sys; sys.modules['torch'] = None; from iotune.cli.main import main; "
    hide += "sys.exit(main())"
    proc = subprocess.run(
        [sys.executable, "-c", hide, "validate", str(path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert_usage_error(proc, "read.batches.loader", "'torch' needs PyTorch", "auto, iotune")


def test_pin_memory_does_not_apply_to_iotunes_loader() -> None:
    from iotune.runner.plan import make_plan

    text = HEAD + "parameters: {pin_memory: [off, on]}\n"
    text += "read: {patterns: [batches], batches: {batch: 2, batches: 2, loader: iotune}}\n"
    plan = make_plan(load_spec_text(text))
    assert len(plan.trials) == 1
    assert "pin_memory does not apply to iotune's loader" in plan.points[-1].reason
