"""The batches pattern's consuming loop and its steady-state figures."""

from __future__ import annotations

import math
import time

import pytest

from iotune.measuring.steady import Timeline, consume, figures


def test_samples_per_second_and_utilisation_leave_the_first_batch_out() -> None:
    # the loader took 2 s to start, then a batch every 0.1 s, 0.09 s of it the step
    ready = (2.0, 2.1, 2.2, 2.3, 2.4)
    entry = figures(Timeline(ready, 2.5, 5 * 400), batch=4, step=0.09)
    assert entry["first_batch_s"] == 2.0
    assert entry["samples_per_s"] == pytest.approx(4 * 4 / 0.4)  # 40, not 20 / 2.5
    assert entry["utilisation"] == pytest.approx(0.9)
    assert entry["ops"] == 20 and entry["bytes"] == 2000 and entry["s"] == 2.5


def test_one_batch_has_no_steady_state() -> None:
    entry = figures(Timeline((0.5,), 1.0, 100), batch=8, step=0.1)
    assert entry["samples_per_s"] == pytest.approx(8.0)
    assert math.isnan(entry["utilisation"])


def test_the_loop_computes_a_step_per_batch_and_takes_no_more_than_asked() -> None:
    taken = []

    def source():
        for k in range(10):
            taken.append(k)
            yield 100

    t0 = time.perf_counter()
    timeline = consume(source(), 4, 0.02)
    assert taken == [0, 1, 2, 3]  # a fifth batch is never asked for
    assert timeline.delivered == 400 and len(timeline.ready) == 4
    assert time.perf_counter() - t0 >= 4 * 0.02 and timeline.total >= 4 * 0.02
    assert figures(timeline, 1, 0.02)["utilisation"] > 0.5
