"""The decision in words: read the source as it is, through references, or rewritten.

Words for :func:`iotune.analysis.decision.decide`'s figures, printed by ``recommend``
and ``show``: the way chosen first, then each way's read time and one-off cost, then the
break-evens in reads with their intervals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iotune.core.units import format_duration, format_size
from iotune.measuring.ratio import CONFIDENCE

#: what a way's one-off bytes are
MADE = {"references": "of references", "rewrite": "written"}


def decision_lines(decision: Mapping[str, Any]) -> list[str]:
    """The decision for a terminal (empty without one).

    Parameters
    ----------
    decision
        :attr:`iotune.analysis.recommend.Recommendation.decision`.
    """
    if not decision or not decision.get("objective"):
        return []
    named = decision["objective"]
    outcome = decision["objectives"][named]
    lines = [
        f"in place, references or rewrite ({', '.join(decision['compare'])}): "
        f"{outcome['choice']} for {_objective(named)}{_since(outcome)}"
    ]
    for way in outcome["ways"]:
        lines.append(
            f"  {way['way']:<10} {format_duration(way['read_s']):>9} to read  "
            f"one-off {_one_off(way):<32} {way['label']}"
        )
    lines.append(
        f"  break-even in reads of {_objective(named)} ({CONFIDENCE:.0%} bootstrap interval):"
    )
    lines += [f"    {_row(row)}" for row in outcome["break_even"]]
    others = [
        f"{_objective(m)}: {o['choice']}" for m, o in decision["objectives"].items() if m != named
    ]
    if others:
        lines.append(f"  other objectives: {'; '.join(others)}")
    if decision.get("missing"):
        lines.append(f"  not measured: {', '.join(decision['missing'])}")
    return lines


def _objective(metric: str) -> str:
    return "one read of every pattern" if metric == "workload" else metric


def _since(outcome: Mapping[str, Any]) -> str:
    """When the choice becomes the cheapest: ``, from the first read`` or ``, from 12 reads``."""
    if outcome["choice"] == outcome["ways"][0]["way"]:
        return " (the cheapest to make: nothing that costs more reads faster)"
    return f" (pays for itself {reads_text(outcome['from_reads'])})"


def _one_off(way: Mapping[str, Any]) -> str:
    if way["way"] == "in-place":
        return "nothing (the file as it is)"
    size = format_size(way["one_off_bytes"], exact=False)
    return f"{format_duration(way['one_off_s'])}, {size} {MADE.get(way['way'], 'made')}"


def _row(row: Mapping[str, Any]) -> str:
    head = f"{row['way']} against {row['against']}: "
    if row["never"]:
        return head + "never (it reads no faster)"
    low, high = row["low"], row["high"]
    if low is None or high is None or (isinstance(low, float) and math.isnan(low)):
        interval = "[n=1, no interval]"
    else:
        interval = f"[{_count(low)} to {_count(high)}]"
    return head + f"{reads_text(row['reads'])} {interval}"


def reads_text(reads: float) -> str:
    """``within the first read``, ``after 12 reads`` (a break-even of reads, rounded up)."""
    if reads is None or math.isinf(reads):
        return "never"
    return "within the first read" if reads <= 1 else f"after {math.ceil(reads)} reads"


def _count(reads: float) -> str:
    if reads is None or math.isinf(reads):
        return "never"
    return str(max(1, math.ceil(reads)))
