"""The parameter registry: one definition per knob, read by every layer."""

from __future__ import annotations

import pytest

from iotune.backends import backend_names, get_backend
from iotune.core.errors import SpecError, UsageError
from iotune.core.units import chunk_label
from iotune.model import parameters
from iotune.model.parameters import PARAMETERS, ParameterDef, get
from iotune.model.records import HINT_VALUES, Trial
from iotune.runner.plan import make_plan
from iotune.specfile.parse import load_spec_text

WORKLOAD = "workload: {shape: {time: 8, y: 64, x: 64}}"
#: ids computed before the registry and the hints field existed: they must never move
PINNED_IDS = {
    "posix": ("parameters: {transfer_size: [64KiB, 1MiB]}", ["108edc8ab07f", "4c545924f980"]),
    "zarr": (
        "parameters: {chunks: [[8, 32, 32]], codec: [zlib, none], level: 1, "
        "shards: [none, [8, 64, 64]]}",
        ["587247150756", "6bbc948770cf", "6f66111ce984", "f168ea020013"],
    ),
    "mpiio": (
        "hints: {default: {}, cb: {romio_cb_write: enable, cb_buffer_size: '1048576'}}\n"
        "parameters: {nprocs: [1, 2], hints: [default, cb], io: collective}",
        ["15cec24d5768", "81ca9dbe0b7a", "cbe96e1dbd4d", "ccba99bd0cb0"],
    ),
}


def _workload():
    return load_spec_text(f"version: 1\n{WORKLOAD}\n").workload


@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_parses_prints_and_round_trips(name: str) -> None:
    definition = get(name)
    raw = definition.example
    value = definition.parse(raw, f"parameters.{name}", _workload())
    shown = definition.show(value)
    assert shown == (chunk_label(raw) if definition.kind == "shape" else str(raw))
    # what show() prints is what a spec may say (shapes as lists, counts as numbers)
    back = (
        int(shown) if definition.kind == "count" else raw if definition.kind == "shape" else shown
    )
    assert definition.parse(back, "p", _workload()) == value


@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_bytes_and_units_follow_the_kind(name: str) -> None:
    definition = get(name)
    assert definition.is_bytes == (definition.kind == "size")
    assert (definition.attrs().get("units") == "bytes") == definition.is_bytes
    assert definition.long_name and definition.group in parameters.GROUPS


def test_a_bad_value_names_the_field_and_the_allowed() -> None:
    with pytest.raises(SpecError, match=r"parameters.stripe_size: .*multiple of 64KiB"):
        get("stripe_size").parse("100KiB", "parameters.stripe_size", _workload())
    with pytest.raises(SpecError, match=r"layout: unknown value 'diagonal'; allowed: shared, fpp"):
        get("layout").parse("diagonal", "layout", _workload())


def test_an_unknown_name_lists_the_registered_ones() -> None:
    with pytest.raises(UsageError, match=r"unknown parameter 'chunk'; registered: chunks, shards"):
        get("chunk")


def test_a_definition_is_checked_at_construction() -> None:
    with pytest.raises(ValueError, match="kind 'bytes'; allowed: size, count"):
        ParameterDef("x", "bytes", "format", "x", lambda v, p, w: v, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", backend_names())
def test_every_backend_applies_only_registered_parameters(backend: str) -> None:
    cls = get_backend(backend)
    assert set(cls.parameters) <= set(PARAMETERS)
    assert set(cls.inapplicable) <= set(PARAMETERS)


def test_the_runner_applies_concurrency_fidelity_and_the_loader_knobs_for_every_backend() -> None:
    assert parameters.generic() == (
        "concurrency",
        "fidelity",
        "num_workers",
        "prefetch_factor",
        "pin_memory",
    )


def test_a_fidelity_is_a_share_of_the_time_steps_never_shorter_than_a_chunk() -> None:
    sweep = load_spec_text(
        f"version: 1\n{WORKLOAD}\nbackend: zarr\n"
        "parameters: {chunks: [[4, 8, 8], [1, 16, 16]], fidelity: [0.125, 0.5, 1]}\n"
    )
    steps = sweep.workload.shape[0]
    assert sweep.workload_at(1.0) == sweep.workload == sweep.workload_at(None)
    assert sweep.workload_at(0.5).shape == (steps // 2, *sweep.workload.shape[1:])
    assert sweep.workload_at(0.01).shape[0] == 4  # the longest chunk along time
    plan = make_plan(sweep)
    assert len(plan.trials) == 6 and len({t.id for t in plan.trials}) == 6
    with pytest.raises(SpecError, match=r"parameters\.fidelity.*in \(0, 1\], got 0"):
        load_spec_text(f"version: 1\n{WORKLOAD}\nbackend: zarr\nparameters: {{fidelity: [0, 1]}}\n")


@pytest.mark.parametrize("backend", sorted(PINNED_IDS))
def test_trial_ids_did_not_move(backend: str) -> None:
    spec, ids = PINNED_IDS[backend]
    plan = make_plan(load_spec_text(f"version: 1\n{WORKLOAD}\nbackend: {backend}\n{spec}\n"))
    assert sorted(t.id for t in plan.trials) == ids


def test_hints_are_a_field_of_the_trial_not_a_parameter() -> None:
    spec, _ids = PINNED_IDS["mpiio"]
    plan = make_plan(load_spec_text(f"version: 1\n{WORKLOAD}\nbackend: mpiio\n{spec}\n"))
    cb = [t for t in plan.trials if t.params["hints"] == "cb"]
    assert cb and all(HINT_VALUES not in t.params for t in plan.trials)
    assert dict(cb[0].hints) == {"romio_cb_write": "enable", "cb_buffer_size": "1048576"}
    assert cb[0].effective()[HINT_VALUES] == dict(cb[0].hints)  # what results store
    assert "hint_values" not in cb[0].label() and "hints=cb" in cb[0].label()
    plain = Trial.from_effective("x", "posix", {"transfer_size": 1024})
    assert plain.hints == {} and plain.effective() == {"transfer_size": 1024}


def test_results_label_every_parameter_coordinate(tmp_path) -> None:
    from iotune.app.api import run

    spec = (
        f"version: 1\nname: attrs\n{WORKLOAD}\nbackend: h5py\n"
        "parameters: {chunks: [[8, 32, 32], [1, 64, 64]], codec: [none, zlib], "
        "chunk_cache: [1MiB, 4MiB]}\nread: {patterns: [full]}\nmeasure: {repeats: 1}\n"
    )
    (tmp_path / "s.yaml").write_text(spec)
    ds = run(tmp_path / "s.yaml", out=tmp_path / "out", progress=False)
    for name in ("chunks", "codec", "chunk_cache"):
        assert ds[name].attrs == PARAMETERS[name].attrs(), name
    assert ds["chunk_cache"].attrs == {"long_name": "chunk cache size", "units": "bytes"}
    from iotune.results.accessor import label

    assert (
        label({"chunk_cache": 4 * 2**20, "chunks": "8x32x32"}) == "chunk_cache=4MiB chunks=8x32x32"
    )
