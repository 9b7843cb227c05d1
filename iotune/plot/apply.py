"""Before and after ``iotune apply``: each read pattern's time on the source and the target."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.core.units import format_duration

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def before_after(record: Mapping[str, Any]) -> Figure:
    """Bars of the median seconds per pattern, source (before) beside target (after).

    ``record`` is what the conversion measured after
    (:func:`iotune.convert.after.measure_after`; ``ApplyReport.after``, or
    ``TARGET.iotune-apply.json`` read back).  Whiskers span the repeats (fastest
    to slowest); each pattern is labelled with its speedup and bootstrap interval.  A pattern that
    could not be measured (its ``error``) is left out.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    patterns = [p for p, row in record["patterns"].items() if "error" not in row]
    fig = Figure(figsize=(max(4.5, 1.8 * len(patterns) + 2), 3.8), layout="constrained")
    ax = fig.subplots()
    x = np.arange(len(patterns))
    for offset, side, label in ((-0.2, "source_s", "before (source)"), (0.2, "target_s", "after")):
        times = [np.asarray(record["patterns"][p][side], dtype=float) for p in patterns]
        middle = np.array([np.median(t) for t in times])
        err = np.vstack([middle - [t.min() for t in times], [t.max() for t in times] - middle])
        ax.bar(x + offset, middle, 0.4, yerr=err, capsize=3, label=label)
    ax.set_xticks(x, [_tick(p, record["patterns"][p]) for p in patterns])
    ax.set_ylabel("median time per read, cold")
    # seconds written as the commands write a time: 3 digits in s, ms or µs
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_duration(v) if v else "0"))
    ax.set_title(
        f"{record.get('variable', '')}: before and after {record.get('settings', '')}\n"
        f"({record.get('repeats', '?')} cold repeats each; whiskers: fastest to slowest)",
        fontsize="small",
        wrap=True,  # long settings: wrapped at the figure's edges, not cut off
    )
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3, axis="y")
    return fig


def _tick(pattern: str, row: Mapping[str, Any]) -> str:
    if row.get("speedup") is None:
        return f"read:{pattern}"
    return f"read:{pattern}\n{row['speedup']:.2g}x [{row['low']:.2g} to {row['high']:.2g}]"
