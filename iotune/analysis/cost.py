"""The pick's whole cost: its effect on every metric and on stored size, against what you have.

What you have is, first found: the application's own settings (a spec made from a
Darshan log names them), your file's layout (the ``source`` baseline), the library's
default (``library``), another named baseline, else the sweep's own baseline point.
The figures are :mod:`iotune.results.speedup`'s rows (a ratio of medians over repeats
with its bootstrap interval); :func:`cost_items` says them the one way every output does.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from iotune.results.objective import Candidate
from iotune.results.speedup import interval_text, metric_name, times, vs_point
from iotune.results.ties import YOURS

if TYPE_CHECKING:
    import xarray as xr


def whole_cost(
    ds: xr.Dataset,
    winner: Candidate,
    baseline: Candidate | None,
    *,
    current: bool,
    named: Sequence[Mapping[str, Any]],
    layouts: Mapping[str, str],
) -> tuple[str, list[dict[str, Any]]]:
    """What the winner is compared with, and its speedup rows against it.

    Parameters
    ----------
    ds
        The results.
    winner, baseline
        The pick and the sweep's baseline point (None: not measured).
    current
        Whether ``baseline`` is the application's own settings.
    named
        The winner's rows over the named baselines (:func:`~iotune.results.speedup.vs_baselines`).
    layouts
        What each named baseline laid out.

    Returns
    -------
    against, rows
        ``"source (chunks=1x90x180 codec=zlib)"`` and the rows of that baseline, or
        ``("", [])`` when nothing was measured to compare with; no rows when the
        point compared with is the winner itself.
    """
    if current and baseline is not None:
        return _against_point(ds, winner, baseline, name="your settings", label="current")
    names = list(dict.fromkeys(str(r["baseline"]) for r in named))
    name = next((n for n in YOURS if n in names), names[0] if names else None)
    if name is not None:
        rows = [dict(r) for r in named if r["baseline"] == name]
        return f"{name} ({layouts.get(name, '?')})", rows
    if baseline is not None:
        return _against_point(ds, winner, baseline, name="the baseline", label="baseline")
    return "", []


def _against_point(
    ds: xr.Dataset, winner: Candidate, point: Candidate, *, name: str, label: str
) -> tuple[str, list[dict[str, Any]]]:
    against = f"{name} ({point.label})"
    if point.coords == winner.coords:  # nothing to compare: the pick is that point
        return against, []
    return against, vs_point(ds, winner.coords, point.coords, label=label)


def cost_items(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """``"read:spatial 0.549x [0.522x to 0.596x]"`` per metric, then ``"size 1.02x"``."""
    items = [
        f"{metric_name(r['pattern'])} {times(r['speedup'])} {interval_text(r['low'], r['high'])}"
        for r in rows
    ]
    if rows:
        items.append(f"size {times(rows[0]['size_ratio'])}")
    return items


#: the labels of the rows against a grid point (not a named baseline)
POINTS = ("current", "baseline")


def pack(head: str, items: Sequence[str], *, indent: str, width: int) -> list[str]:
    """``head`` then ``items`` joined by commas, in lines of at most ``width`` characters.

    An item is never split (``read:spatial 0.549x [0.522x to 0.596x]`` stays whole);
    a head too long for one line is wrapped.
    """
    lead = head[: len(head) - len(head.lstrip())]
    lines = textwrap.wrap(head.lstrip(), width=width, initial_indent=lead, subsequent_indent=indent)
    line = lines.pop() if lines else ""
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        if line.strip() and len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = indent + piece
        else:
            line = f"{line} {piece}" if line.strip() else indent + piece
    lines.append(line)
    return lines
