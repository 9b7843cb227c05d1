"""Read patterns as selections: what each pattern reads, and the bytes it delivers."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.core.errors import SpecError
from iotune.measuring.access import delivered_bytes, selections
from iotune.measuring.data import slab_length
from iotune.model.spec import ReadSpec, Workload
from iotune.specfile.parse import parse_read, parse_spec

W = Workload(("time", "y", "x"), (16, 64, 48))
DEFAULT = ReadSpec()


def read(**sections) -> ReadSpec:
    """``read`` parsed by the spec, for the (time, y, x) = (16, 64, 48) workload."""
    return parse_read(sections, W)


def covered(workload: Workload, sels) -> np.ndarray:
    """How many times each element is read by ``sels``."""
    hits = np.zeros(workload.shape, dtype=np.int64)
    for sel in sels:
        hits[sel] += 1
    return hits


def key(sel) -> tuple:
    """A hashable form of a selection (slices are hashable only from Python 3.12)."""
    return tuple((s.start, s.stop, s.step) if isinstance(s, slice) else s for s in sel)


def assert_inside(sel, shape) -> None:
    """Every slice lies within its axis; numpy would silently clip one that does not."""
    for s, n in zip(sel, shape, strict=False):
        if isinstance(s, slice):
            assert s.step in (None, 1)
            start, stop = s.start or 0, n if s.stop is None else s.stop
            assert 0 <= start < stop <= n, (sel, shape)
        else:
            assert 0 <= s < n, (sel, shape)


# --- full --------------------------------------------------------------------


def test_full_reads_a_small_array_in_one_slab():
    assert selections("full", W, DEFAULT) == [(slice(0, 16),)]


@pytest.mark.parametrize("align", [None, 1, 3, 4])
def test_full_covers_the_array_exactly_once_in_order(align):
    # an 8 MiB plane keeps four planes in the 32 MiB slab budget, so there are many slabs
    big = Workload(("time", "y", "x"), (30, 2048, 2048))
    sels = selections("full", big, DEFAULT, align=align)
    assert len(sels) > 1
    assert all(len(sel) == 1 for sel in sels)
    starts = [sel[0].start for sel in sels]
    stops = [sel[0].stop for sel in sels]
    assert starts[0] == 0 and stops[-1] == 30
    assert starts[1:] == stops[:-1], "slabs must be contiguous and in order"
    step = slab_length(big, align=align)
    assert all(stop - start == step for start, stop in zip(starts[:-1], stops[:-1], strict=True))
    if align:
        assert all(start % align == 0 for start in starts), "slabs start on chunk boundaries"
        assert step % align == 0, "whole chunk rows per slab"


def test_full_with_a_chunk_row_larger_than_the_budget_still_covers_everything():
    big = Workload(("time", "y", "x"), (30, 2048, 2048))
    sels = selections("full", big, DEFAULT, align=8)  # 8 planes are 64 MiB: do not fit
    assert [(s[0].start, s[0].stop) for s in sels][:2] == [(0, 4), (4, 8)]
    small = Workload(("time", "y", "x"), (7, 8, 8))
    assert (covered(small, selections("full", small, DEFAULT, align=3)) == 1).all()


# --- spatial -----------------------------------------------------------------


def test_spatial_default_is_half_the_map_at_four_steps_spread_over_time():
    sels = selections("spatial", W, DEFAULT)
    assert [sel[0] for sel in sels] == [0, 5, 10, 15]
    for sel in sels:
        assert all(isinstance(t, int) for t in sel[:1])
        y, x = sel[1:]
        assert (y.stop - y.start, x.stop - x.start) == (32, 24)
        assert_inside(sel, W.shape)
    assert len({key(sel[1:]) for sel in sels}) == 1, "the same window at every step"


def test_spatial_steps_are_few_when_the_data_is_short():
    short = Workload(("time", "y", "x"), (2, 8, 8))
    assert [sel[0] for sel in selections("spatial", short, DEFAULT)] == [0, 1]


@pytest.mark.parametrize(
    ("spatial", "steps", "window"),
    [
        ({"time": 2, "y": 10, "x": 7}, 2, (10, 7)),
        ({"y": 64, "x": 48}, 4, (64, 48)),
        ({"y": 1.0, "x": 0.25}, 4, (64, 12)),
        ({"time": 0.5, "y": 0.5}, 8, (32, 24)),
        ({"time": 16}, 16, (32, 24)),
        ({"time": 1, "y": 1, "x": 1}, 1, (1, 1)),
    ],
    ids=["counts", "whole-maps", "fractions", "time-fraction", "every-step", "one-value"],
)
def test_spatial_explicit_window_counts_and_fractions(spatial, steps, window):
    sels = selections("spatial", W, read(spatial=spatial))
    assert len(sels) == steps
    times = [sel[0] for sel in sels]
    assert times == sorted(set(times)), "distinct steps in order"
    assert times[0] == 0 and (steps == 1 or times[-1] == 15)
    for sel in sels:
        assert_inside(sel, W.shape)
        assert tuple(s.stop - s.start for s in sel[1:]) == window


def test_spatial_on_a_four_dimensional_workload_windows_every_trailing_dimension():
    w4 = Workload(("time", "z", "y", "x"), (8, 6, 32, 32))
    sels = selections("spatial", w4, parse_read({"spatial": {"z": 2}}, w4))
    assert len(sels) == 4
    for sel in sels:
        assert len(sel) == 4
        assert_inside(sel, w4.shape)
        assert tuple(s.stop - s.start for s in sel[1:]) == (2, 16, 16)


# --- timeseries --------------------------------------------------------------


@pytest.mark.parametrize("pixels", [1, 5, 16])
def test_timeseries_reads_every_step_at_n_points(pixels):
    sels = selections("timeseries", W, read(timeseries={"pixels": pixels}))
    assert len(sels) == pixels
    for sel in sels:
        assert sel[0] == slice(None)
        assert len(sel) == 3 and all(isinstance(i, int) for i in sel[1:])
        assert_inside(sel, W.shape)
        assert np.zeros(W.shape)[sel].shape == (16,)


def test_timeseries_points_spread_over_the_map():
    sels = selections("timeseries", W, read(timeseries={"pixels": 64}))
    assert len({sel[1:] for sel in sels}) > 32


# --- random ------------------------------------------------------------------


def test_random_default_is_64_boxes_of_one_step_by_16_by_16():
    sels = selections("random", W, DEFAULT)
    assert len(sels) == 64
    for sel in sels:
        assert tuple(s.stop - s.start for s in sel) == (1, 16, 16)
        assert_inside(sel, W.shape)
    assert len({key(sel) for sel in sels}) > 32, "boxes land at many places"


def test_random_default_box_is_clipped_to_small_dimensions():
    narrow = Workload(("time", "x"), (10, 8))
    sels = selections("random", narrow, ReadSpec(random_ops=5))
    assert [tuple(s.stop - s.start for s in sel) for sel in sels] == [(1, 8)] * 5


@pytest.mark.parametrize(
    ("random", "box"),
    [
        ({"ops": 7, "shape": {"time": 4, "y": 8, "x": 2}}, (4, 8, 2)),
        ({"ops": 3, "shape": {"x": 48}}, (1, 16, 48)),
        ({"ops": 9, "shape": {"time": 16, "y": 64, "x": 48}}, (16, 64, 48)),
        ({"ops": 200}, (1, 16, 16)),
    ],
    ids=["box", "partial-shape", "whole-array", "many"],
)
def test_random_reads_ops_boxes_of_the_configured_shape_inside_the_data(random, box):
    sels = selections("random", W, read(random=random))
    assert len(sels) == random["ops"]
    for sel in sels:
        assert tuple(s.stop - s.start for s in sel) == box
        assert_inside(sel, W.shape)


def test_random_boxes_reach_both_ends_of_every_dimension():
    box = {"ops": 2000, "shape": {"time": 1, "y": 4, "x": 4}}
    sels = selections("random", W, read(random=box))
    for axis, n in enumerate(W.shape):
        assert min(sel[axis].start for sel in sels) == 0
        assert max(sel[axis].stop for sel in sels) == n


def test_random_positions_are_fixed_by_the_seed():
    same = selections("random", W, DEFAULT)
    assert selections("random", W, DEFAULT) == same
    assert selections("random", W, DEFAULT, align=4) == same, "chunking does not move them"
    other = Workload(W.dims, W.shape, seed=1)
    assert selections("random", other, DEFAULT) != same
    assert selections("timeseries", other, DEFAULT) != selections("timeseries", W, DEFAULT)
    assert selections("spatial", other, DEFAULT) != selections("spatial", W, DEFAULT)


def test_unknown_pattern_is_an_error():
    with pytest.raises(ValueError, match="diagonal"):
        selections("diagonal", W, DEFAULT)


# --- delivered bytes ---------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64"])
@pytest.mark.parametrize("pattern", ["full", "spatial", "timeseries", "random"])
def test_delivered_bytes_equal_what_numpy_indexing_returns(pattern, dtype):
    w = Workload(("time", "y", "x"), (12, 40, 24), dtype=dtype)
    spec = ReadSpec(random_shape=(("time", 3), ("x", 5)), random_ops=10)
    data = np.zeros(w.shape, dtype)
    sels = selections(pattern, w, spec, align=5)
    for sel in sels:
        assert delivered_bytes(sel, w) == data[sel].nbytes
    if pattern == "full":
        assert sum(delivered_bytes(sel, w) for sel in sels) == w.nbytes


@pytest.mark.parametrize(
    ("selection", "nbytes"),
    [
        ((slice(None),), 16 * 64 * 48 * 2),
        ((slice(2, 5),), 3 * 64 * 48 * 2),
        ((3,), 64 * 48 * 2),
        ((3, slice(0, 10), slice(5, 9)), 10 * 4 * 2),
        ((slice(None), 7, 9), 16 * 2),
        ((1, 2, 3), 2),
        ((slice(10, 100),), 6 * 64 * 48 * 2),
    ],
    ids=["all", "slab", "plane", "window", "series", "point", "clipped"],
)
def test_delivered_bytes_of_hand_made_selections(selection, nbytes):
    assert delivered_bytes(selection, W) == nbytes


# --- read.random in the spec -------------------------------------------------


def spec_with(read_section) -> dict:
    return {
        "version": 1,
        "workload": {"shape": {"time": 16, "y": 64, "x": 48}},
        "read": read_section,
    }


def test_read_random_defaults_and_values():
    assert parse_spec(spec_with({"random": None})).read.random_ops == 64
    sweep = parse_spec(
        spec_with({"patterns": ["random"], "random": {"ops": 5, "shape": {"y": 8, "time": 2}}})
    )
    assert sweep.read.patterns == ("random",)
    assert sweep.read.random_ops == 5
    assert dict(sweep.read.random_shape) == {"y": 8, "time": 2}


@pytest.mark.parametrize(
    ("random", "field", "words"),
    [
        ({"opps": 5}, "read.random.opps", ("unknown key", "ops", "shape")),
        ({"shape": {"y": 8}, "size": 3}, "read.random.size", ("unknown key",)),
        ({"shape": {"z": 8}}, "read.random.shape.z", ("time", "y", "x")),
        ({"shape": {"x": 49}}, "read.random.shape.x", ("49", "<= 48")),
        ({"shape": {"time": 17}}, "read.random.shape.time", ("<= 16",)),
        ({"shape": {"y": 0}}, "read.random.shape.y", (">= 1",)),
        ({"shape": {"y": 0.5}}, "read.random.shape.y", ("integer",)),
        ({"shape": [1, 16, 16]}, "read.random.shape", ("mapping",)),
        ({"ops": 0}, "read.random.ops", (">= 1",)),
        ({"ops": "many"}, "read.random.ops", ("integer",)),
        ("yes", "read.random", ("mapping",)),
    ],
    ids=[
        "unknown-key",
        "unknown-key-2",
        "unknown-dim",
        "shape-too-large",
        "time-too-large",
        "shape-zero",
        "shape-fraction",
        "shape-list",
        "ops-zero",
        "ops-string",
        "not-a-mapping",
    ],
)
def test_read_random_errors_name_the_field(random, field, words):
    with pytest.raises(SpecError) as info:
        parse_spec(spec_with({"random": random}))
    assert info.value.field == field
    for word in words:
        assert word in info.value.message
