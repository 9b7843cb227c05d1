"""Grid expansion, merging of equivalent grid points, trial ids."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from iotune.core.errors import UsageError
from iotune.model.spec import Sweep
from iotune.runner.plan import MAX_TRIALS, Plan, grid_size, make_plan, trial_id
from iotune.specfile.parse import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[2]
QUICK = ROOT / "sweeps" / "quick.yaml"


def make(parameters: dict[str, Any], **workload: Any) -> Sweep:
    shape = {"time": 16, "y": 32, "x": 32}
    return parse_spec(
        {"version": 1, "workload": {"shape": shape, **workload}, "parameters": parameters}
    )


def point(plan: Plan, **coords: Any):
    (match,) = [p for p in plan.points if p.coords == coords]
    return match


def trial(plan: Plan, tid: str | None):
    (match,) = [t for t in plan.trials if t.id == tid]
    return match


def assert_consistent(plan: Plan) -> None:
    """Every grid point is measured by exactly one trial or says why not.

    A trial no grid point owns is a named baseline's (the spec's ``baselines``).
    """
    ids = [t.id for t in plan.trials]
    assert len(set(ids)) == len(ids)
    owners = [p.trial_id for p in plan.points if p.trial_id is not None]
    assert len(set(owners)) == len(owners)  # each trial owns at most one grid point
    extra = [b.trial_id for b in plan.baselines if b.trial_id not in owners]
    assert sorted({*owners, *extra}) == sorted(ids)  # the rest are the baselines'
    assert ids[: len(owners)] == [t for t in ids if t in owners]  # the grid's come first
    for p in plan.points:
        if p.applicable:
            assert p.trial_id in ids
            assert p.reason == ""
        else:
            assert p.trial_id is None
            assert p.reason.strip()


# --- grid -------------------------------------------------------------------


def test_grid_size_and_coords():
    sweep = make(
        {"chunks": [[8, 16, 16], "contiguous"], "codec": ["none", "zlib", "zstd"], "level": 3}
    )
    plan = make_plan(sweep)
    assert grid_size(sweep) == 6
    assert len(plan.points) == 6
    assert plan.dims == ("chunks", "codec")
    assert plan.coords == {
        "chunks": ("8x16x16", "contiguous"),
        "codec": ("none", "zlib", "zstd"),
    }
    assert {tuple(p.coords.items()) for p in plan.points} == {
        (("chunks", c), ("codec", k)) for c in plan.coords["chunks"] for k in plan.coords["codec"]
    }
    # contiguous + zlib and contiguous + zstd cannot be written
    assert len(plan.trials) == 4
    assert_consistent(plan)


def test_nothing_swept_is_one_point():
    sweep = make({"codec": "zlib", "chunks": [8, 16, 16]})
    plan = make_plan(sweep)
    assert grid_size(sweep) == 1
    assert plan.dims == ()
    assert [p.coords for p in plan.points] == [{}]
    (only,) = plan.trials
    assert only.params == {
        "chunks": "8x16x16",
        "codec": "zlib",
        "level": 4,
        "shuffle": "byte",
        "chunk_cache": None,
    }
    assert plan.points[0].trial_id == only.id


def test_quick_sweep_plan():
    plan = make_plan(load_spec(QUICK))
    assert len(plan.points) == 3 * 4 * 2
    # the grid's 24, then its two baselines (library: contiguous; balanced: Rew's chunks)
    assert len(plan.trials) == 24 + 2
    assert [b.name for b in plan.baselines] == ["library", "balanced"]
    assert {p.trial_id for p in plan.points}.isdisjoint(b.trial_id for b in plan.baselines)
    assert plan.dims == ("chunks", "codec", "chunk_cache")
    assert plan.coords["chunk_cache"] == (2**20, 64 * 2**20)
    assert_consistent(plan)


def test_trial_label():
    plan = make_plan(make({"codec": "none", "chunks": [8, 16, 16], "chunk_cache": "64MiB"}))
    assert plan.trials[0].label() == "chunks=8x16x16 codec=none shuffle=none chunk_cache=64MiB"


# --- trial ids --------------------------------------------------------------


def test_trial_ids_are_stable():
    first = make_plan(load_spec(QUICK))
    second = make_plan(load_spec(QUICK))
    assert [t.id for t in first.trials] == [t.id for t in second.trials]
    assert [p.trial_id for p in first.points] == [p.trial_id for p in second.points]
    assert all(re.fullmatch(r"[0-9a-f]{12}", t.id) for t in first.trials)


def test_trial_ids_do_not_depend_on_name():
    spec = {"version": 1, "workload": {"shape": {"time": 4, "x": 8}}, "parameters": {}}
    one = make_plan(parse_spec({**spec, "name": "one"}))
    two = make_plan(parse_spec({**spec, "name": "two"}))
    assert one.trials[0].id == two.trials[0].id


@pytest.mark.parametrize(
    "workload",
    [{"seed": 1}, {"dtype": "float32"}, {"field": "random"}],
    ids=["seed", "dtype", "field"],
)
def test_trial_id_changes_with_workload(workload):
    params = {"codec": ["none", "zlib"]}
    base = {t.params["codec"]: t.id for t in make_plan(make(params)).trials}
    other = {t.params["codec"]: t.id for t in make_plan(make(params, **workload)).trials}
    assert base.keys() == other.keys()
    assert all(base[k] != other[k] for k in base)


def test_trial_id_changes_with_params_not_key_order():
    workload = {"shape": {"time": 4}}
    assert trial_id("netcdf4", {"a": 1, "b": 2}, workload) == trial_id(
        "netcdf4", {"b": 2, "a": 1}, workload
    )
    assert trial_id("netcdf4", {"a": 1}, workload) != trial_id("netcdf4", {"a": 2}, workload)
    assert trial_id("netcdf4", {"a": 1}, workload) != trial_id("other", {"a": 1}, workload)


# --- not applicable and merged grid points ----------------------------------


def test_level_swept_with_codec_none_is_measured_once():
    plan = make_plan(make({"codec": "none", "level": [1, 5, 9]}))
    assert len(plan.points) == 3
    (only,) = plan.trials
    assert only.params["codec"] == "none"
    assert only.params["level"] is None
    measured = [p for p in plan.points if p.applicable]
    assert [p.coords for p in measured] == [{"level": 1}]
    for level in (5, 9):
        p = point(plan, level=level)
        assert not p.applicable
        assert p.trial_id is None
        assert "level does not apply to codec 'none'" in p.reason
        assert "measured at level=1" in p.reason
    assert_consistent(plan)


def test_level_swept_with_codec_swept():
    plan = make_plan(make({"codec": ["none", "zlib"], "level": [1, 9]}))
    assert len(plan.trials) == 3
    assert point(plan, codec="none", level=1).applicable
    merged = point(plan, codec="none", level=9)
    assert "level" in merged.reason
    assert "measured at codec=none, level=1" in merged.reason
    assert trial(plan, point(plan, codec="zlib", level=9).trial_id).params["level"] == 9
    assert_consistent(plan)


def test_contiguous_with_compression_is_not_applicable():
    plan = make_plan(make({"chunks": [[8, 16, 16], "contiguous"], "codec": "zlib"}))
    (only,) = plan.trials
    assert only.params["chunks"] == "8x16x16"
    p = point(plan, chunks="contiguous")
    assert not p.applicable
    assert p.trial_id is None
    assert "contiguous" in p.reason
    assert "chunked" in p.reason
    assert_consistent(plan)


def test_netcdf4_shuffle_with_bzip2_is_not_applicable():
    plan = make_plan(make({"codec": ["zlib", "bzip2"], "shuffle": "byte"}))
    (only,) = plan.trials
    assert only.params["codec"] == "zlib"
    assert only.params["shuffle"] == "byte"
    p = point(plan, codec="bzip2")
    assert not p.applicable
    assert "netCDF4" in p.reason
    assert "bzip2" in p.reason


def test_bit_shuffle_without_blosc_is_not_applicable():
    plan = make_plan(make({"codec": ["zlib", "blosc-lz4"], "shuffle": "bit"}))
    assert [t.params["codec"] for t in plan.trials] == ["blosc-lz4"]
    assert "bit shuffle" in point(plan, codec="zlib").reason


def test_level_out_of_range_for_one_codec_is_not_applicable():
    plan = make_plan(make({"codec": ["zlib", "zstd"], "level": [3, 15]}))
    p = point(plan, codec="zlib", level=15)
    assert not p.applicable
    assert "level 15" in p.reason
    assert "1..9" in p.reason
    assert point(plan, codec="zstd", level=15).applicable
    assert len(plan.trials) == 3


def test_measured_point_is_the_one_matching_the_effective_params():
    # codec none makes both shuffles the same trial; shuffle=none says what really ran
    plan = make_plan(make({"codec": "none", "shuffle": ["byte", "none"]}))
    (only,) = plan.trials
    assert only.params["shuffle"] == "none"
    assert point(plan, shuffle="none").trial_id == only.id
    byte = point(plan, shuffle="byte")
    assert byte.trial_id is None
    assert "shuffle does not apply to codec 'none'" in byte.reason
    assert "measured at shuffle=none" in byte.reason


def test_chunk_cache_with_contiguous_is_merged():
    plan = make_plan(
        make({"chunks": ["contiguous", [8, 16, 16]], "chunk_cache": ["1MiB", "64MiB"]})
    )
    assert len(plan.points) == 4
    assert len(plan.trials) == 3
    merged = point(plan, chunks="contiguous", chunk_cache=64 * 2**20)
    assert "chunk_cache does not apply to contiguous storage" in merged.reason
    assert_consistent(plan)


def test_every_point_is_measured_or_explained():
    sweep = make(
        {
            "chunks": [[8, 16, 16], "contiguous", "auto"],
            "codec": ["none", "zlib", "bzip2", "zstd", "blosc-lz4"],
            "level": [1, 9, 15],
            "shuffle": ["none", "byte", "bit"],
            "chunk_cache": ["1MiB", "4MiB"],
        }
    )
    plan = make_plan(sweep)
    assert len(plan.points) == grid_size(sweep) == 3 * 5 * 3 * 3 * 2
    assert_consistent(plan)
    assert any(not p.applicable for p in plan.points)


# --- size limit -------------------------------------------------------------


def _sized(caches: int) -> Sweep:
    """16 chunk shapes x ``caches`` chunk-cache sizes."""
    chunks = [[t, 32, 32] for t in range(1, 17)]
    return make({"chunks": chunks, "chunk_cache": list(range(1, caches + 1))})


def test_plan_refuses_more_than_max_trials():
    sweep = _sized(626)
    assert grid_size(sweep) == 10_016 > MAX_TRIALS
    with pytest.raises(UsageError) as info:
        make_plan(sweep)
    assert "10,016" in str(info.value)
    assert "--allow-large" in str(info.value)
    plan = make_plan(sweep, yes=True)
    assert len(plan.points) == 10_016
    assert len(plan.trials) == 10_016


def test_plan_allows_exactly_max_trials():
    sweep = _sized(625)
    assert grid_size(sweep) == MAX_TRIALS == 10_000
    assert len(make_plan(sweep).points) == 10_000
