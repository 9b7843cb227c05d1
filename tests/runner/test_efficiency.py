"""A run's efficiency figures from the spans of its tasks: busy share, start-up, tail."""

from __future__ import annotations

import pytest

from iotune.model.records import TrialResult
from iotune.runner.efficiency import Efficiency, efficiency


def spans(*pairs: tuple[float, float]) -> list[TrialResult]:
    return [TrialResult(f"t{i}", "ok", started=s, ended=e) for i, (s, e) in enumerate(pairs)]


def test_two_workers_with_one_long_task_last_report_its_tail():
    # executor asked at 100; worker A: 102-104 then 104-110; worker B: 102-105, idle after
    got = efficiency(100.0, spans((102, 104), (102, 105), (104, 110)), workers=2)
    assert got is not None
    assert got.startup_s == pytest.approx(2.0)
    assert got.span_s == pytest.approx(8.0)
    assert got.busy == pytest.approx(11 / 16)
    assert got.tail_s == pytest.approx(5.0)  # from B's end at 105 to 110
    assert got.line() == (
        "efficiency: 2 workers busy 69 % of 8.0 s; start-up 2.0 s, tail 5.0 s with idle workers"
    )


def test_gaps_between_tasks_of_a_busy_farm_are_not_the_tail():
    got = efficiency(0.0, spans((1, 3), (1, 2), (2.1, 3)), workers=2)
    assert got is not None and got.tail_s == pytest.approx(0.0)
    assert efficiency(0.0, spans((1, 2), (2.05, 3)), workers=1).tail_s == pytest.approx(0.0)


def test_nothing_run_has_no_figures_and_the_attributes_round_trip():
    assert efficiency(0.0, [], workers=4) is None
    got = efficiency(0.0, spans((1, 3), (1, 2)), workers=2)
    assert got is not None
    attrs = {f"provenance_{k}": v for k, v in got.provenance().items()}
    back = Efficiency.from_attrs(attrs)
    assert back is not None and back.line() == got.line()
    assert Efficiency.from_attrs({}) is None
