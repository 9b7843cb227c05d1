"""Text summaries of a results Dataset: the best configuration per metric, a table.

Everything is read through ``ds.iotune`` (:mod:`iotune.results.accessor`).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.core.errors import RecommendError
from iotune.core.units import format_duration, format_number
from iotune.results import percall
from iotune.results.accessor import label, value_label  # and ds.iotune
from iotune.results.batches import loader_note
from iotune.results.labels import plain
from iotune.results.objective import own_patterns

if TYPE_CHECKING:
    import xarray as xr


def best(ds: xr.Dataset) -> list[dict[str, Any]]:
    """The best ok configuration for writes and for each read pattern (median of repeats).

    A row's ``MiBps`` is the winner's median MiB/s (for the user's own code, what came
    from storage: information, not what it was ranked by); a pattern of the user's
    own code also has ``s_per_call`` and ``seconds_per_call`` (``median``, ``low``,
    ``high``: what it was ranked by, :mod:`iotune.results.percall`).
    """
    rows = []
    for metric in ds.iotune.metrics:
        try:
            winner = ds.iotune.best(metric)
        except RecommendError:
            rows.append({"metric": metric, "config": "no successful trial", "MiBps": np.nan})
            continue
        rate = winner.median[metric]
        if percall.per_call(ds, metric):
            found = _median_at(ds["read_MiBps"].sel(pattern=metric[5:]), winner.coords)
            rate = np.nan if found is None else found
        rows.append(
            {
                "metric": metric,
                "config": winner.label,
                "MiBps": rate,
                "ratio": winner.ratio,
                **seconds_per_call(ds, metric, winner.coords),
                **seconds_per_read(ds, metric, winner.coords),
                **({"seconds_per_call": s} if (s := winner.seconds_per_call.get(metric)) else {}),
            }
        )
    return rows


#: built-in patterns that read little at a time: a person reads their time per read
SMALL_READS = ("timeseries", "random")


def seconds_per_call(ds: xr.Dataset, metric: str, coords: dict[str, Any]) -> dict[str, float]:
    """``{"s_per_call": median seconds}`` for a pattern that is the user's code, else ``{}``.

    A person judges an analysis by how long a call takes; MiB/s is for comparing.
    """
    pattern = metric.removeprefix("read:")
    if pattern not in own_patterns(ds) or "read_s" not in ds:
        return {}
    seconds = _median_at(ds["read_s"].sel(pattern=pattern), coords)
    return {} if seconds is None else {"s_per_call": seconds}


def mib_per_read(ds: xr.Dataset, metric: str) -> tuple[str, float] | None:
    """``("read", MiB)`` or ``("call", MiB)``: what one read of ``metric``'s pattern moves.

    Only for the patterns the commands show as a time (:func:`seconds_per_read`,
    :func:`seconds_per_call`), and only when a read moves the same bytes at every point
    (a built-in pattern counts the raw bytes of its selection; a user's call may count
    what came from storage, which the layout changes); ``None`` otherwise.  Then a
    throughput ``y`` in MiB/s is a time of ``MiB / y`` seconds (figures label their
    axes so).  A pattern ranked by calls a second (:mod:`iotune.results.percall`) gives
    ``("call", 1.0)``: ``y`` calls/s is ``1 / y`` seconds a call.
    """
    if percall.per_call(ds, metric):
        return "call", 1.0
    pattern = metric.removeprefix("read:")
    if "read_bytes" not in ds or "pattern" not in ds.dims or pattern not in ds["pattern"]:
        return None
    moved = ds["read_bytes"].sel(pattern=pattern)
    if pattern in SMALL_READS and "read_ops" in ds:
        noun, moved = "read", moved / ds["read_ops"].sel(pattern=pattern)
    elif pattern in own_patterns(ds):
        noun = "call"
    else:
        return None
    found = np.asarray(moved.values, dtype=float)
    found = found[np.isfinite(found) & (found > 0)]
    if not found.size or found.max() > 1.01 * found.min():
        return None  # bytes that differ by layout (a user's call counts stored bytes): no one time
    return noun, float(np.median(found)) / 2**20


def seconds_per_read(ds: xr.Dataset, metric: str, coords: dict[str, Any]) -> dict[str, float]:
    """``{"s_per_read": median seconds}`` for a small-read built-in pattern, else ``{}``.

    One read is one selection: a pixel's whole series for ``timeseries``, one box
    for ``random`` (``read_s`` over ``read_ops``).
    """
    pattern = metric.removeprefix("read:")
    if pattern not in SMALL_READS or "read_s" not in ds or "read_ops" not in ds:
        return {}
    if pattern not in ds["pattern"].values:
        return {}
    each = ds["read_s"].sel(pattern=pattern) / ds["read_ops"].sel(pattern=pattern)
    seconds = _median_at(each, coords)
    return {} if seconds is None else {"s_per_read": seconds}


def _median_at(values: xr.DataArray, coords: dict[str, Any]) -> float | None:
    """The median over repeats at ``coords`` of a grid, or of a search's visited points."""
    try:
        if "point" in values.dims:  # a search's results: the visited points, not a grid
            match = np.ones(values.sizes["point"], dtype=bool)
            for dim, value in coords.items():
                match &= values[dim].values == value
            values = values.isel(point=np.flatnonzero(match))
        else:
            values = values.sel(coords)
        values = values.median("repeat")
    except (KeyError, ValueError):  # coordinates the variable does not have: say nothing
        return None
    return float(values.values.ravel()[0]) if values.size == 1 else None


def format_best(ds: xr.Dataset) -> str:
    """:func:`best` as text: the user's own code by its time a call, MiB/s beside it."""
    lines = ["best configuration (median of repeats):"]
    for row in best(ds):
        if "seconds_per_call" in row:  # ranked by the time a call: said first
            storage = "" if np.isnan(row["MiBps"]) else f", {_rate(row['MiBps'])} from storage"
            lines.append(
                f"  {row['metric']:<18} {percall.said(row['seconds_per_call'])}  "
                f"ratio {row['ratio']:5.2f}  {row['config']}{storage}"
            )
        elif np.isnan(row["MiBps"]):
            lines.append(f"  {row['metric']:<18} {row['config']}")
        else:
            per_call = ""
            if "s_per_call" in row:
                per_call = f" ({format_duration(row['s_per_call'])} a call)"
            elif "s_per_read" in row:
                per_call = f" ({format_duration(row['s_per_read'])} a read)"
            lines.append(
                f"  {row['metric']:<18} {format_number(row['MiBps']):>9} MiB/s  ratio "
                f"{row['ratio']:5.2f}  {row['config']}{per_call}"
            )
    note = loader_note(ds)
    return "\n".join([*lines, f"  {note}"] if note else lines)


def _rate(mibps: float) -> str:
    return f"{format_number(mibps)} MiB/s"


def table(ds: xr.Dataset, *, include_not_applicable: bool = False) -> str:
    """One row per grid point: parameters, median throughputs, ratio and status."""
    dims, metrics = list(ds.iotune.swept), list(ds.iotune.metrics)
    calls = [m for m in metrics if percall.per_call(ds, m)]  # shown as the time a call
    head = [*dims, *(f"{m} (a call)" if m in calls else m for m in metrics), "ratio", "status"]
    rows = []
    reasons: dict[str, int] = {}  # a reason once below the table, by its number
    for point in ds.iotune.points(include_not_applicable=include_not_applicable):
        cells = [value_label(d, point[d]) for d in dims]
        cells += [_cell(point[m], m in calls) for m in metrics]
        cells.append(format_number(point.get("ratio", np.nan), digits=2))
        status, error = point.get("status", ""), str(point.get("error", "") or "")
        if status == "partial":  # short enough to say in the row: "1 of 3 repeats"
            status = f"partial ({error.split(' (')[0]})"
        elif status != "ok" and error:
            number = reasons.setdefault(error, len(reasons) + 1)
            status = f"{status} ({number})"
        cells.append(status)
        rows.append(cells)
    widths = [max(len(str(r[c])) for r in [head, *rows]) for c in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*head).rstrip(), fmt.format(*("-" * w for w in widths))]
    out += [fmt.format(*r).rstrip() for r in rows]
    hidden = ds.iotune.counts().get("not_applicable", 0) if not include_not_applicable else 0
    note = f"; {hidden} not-applicable points hidden (--all shows them)" if hidden else ""
    floors = ", ".join(f"{m} {v:.0%}" for m, v in ds.iotune.noise.items())
    if floors:
        note += f"; noise floor of the run: {floors}"
    what = "throughput in MiB/s" + (", your code in seconds a call" if calls else "")
    out.append(f"({what}, median of repeats{note})")
    out += nowhere(ds)
    for reason, number in reasons.items():  # wrapped: a library's words can be long
        out += textwrap.wrap(f"({number}) {reason}", width=100, subsequent_indent="    ")
    splits = dask_splits(ds)
    if splits:
        out.append(
            "dask chunks that split stored chunks (xarray reads those chunks more than once):"
        )
        out += [f"  {label(row['coords'])}: along {row['dims']}" for row in splits]
    return "\n".join(out)


def _cell(value: float, per_call: bool) -> str:
    """A table cell: MiB/s, or the time a call for calls/s."""
    return format_duration(1 / value) if per_call and value > 0 else format_number(value)


def dask_splits(ds: xr.Dataset) -> list[dict[str, Any]]:
    """The points whose dask chunks split stored chunks: ``{"coords", "dims"}`` each.

    Read from the ``dask_chunks_split`` a read through xarray records in
    ``file_properties`` (:func:`iotune.runner.steps.record_dask_chunks`).
    """
    if "file_properties" not in ds:
        return []
    props = ds["file_properties"]
    found = []
    for index in np.ndindex(props.shape):
        text = str(props.values[index])
        if "dask_chunks_split" not in text:
            continue
        dims = json.loads(text)["dask_chunks_split"]
        found.append({"coords": ds.iotune.coords_of(props[index]), "dims": dims})
    return found


@dataclass(frozen=True)
class Nowhere:
    """A swept value that no grid point could apply, and the first reason recorded."""

    dim: str
    value: Any
    reason: str

    @property
    def line(self) -> str:
        """``shuffle=bit: applies nowhere: <reason>``, as every command and figure says it."""
        return f"{self.dim}={value_label(self.dim, self.value)}: applies nowhere: {self.reason}"


def applies_nowhere(
    values: Mapping[str, Sequence[Any]],
    points: Iterable[tuple[Mapping[str, Any], bool, str]],
) -> list[Nowhere]:
    """The swept values no point applied, each with the first reason given.

    Parameters
    ----------
    values
        Each swept dimension's values; a dimension with one value is not a choice
        the user made between values, so it is left out.
    points
        ``(coords, applicable, reason)`` per grid point: a plan's points before a run,
        a results Dataset's after (a failed point did apply).
    """
    points = [({k: plain(v) for k, v in c.items()}, ok, why) for c, ok, why in points]
    found = []
    for dim, choices in values.items():
        if len(choices) < 2:
            continue
        for value in map(plain, choices):
            here = [(ok, why) for coords, ok, why in points if coords.get(dim) == value]
            if here and not any(ok for ok, _ in here):
                why = next((str(w) for _, w in here if str(w)), "not applicable")
                found.append(Nowhere(dim, value, why))
    return found


def nowhere_found(ds: xr.Dataset) -> list[Nowhere]:
    """:func:`applies_nowhere` of a results Dataset (a grid; a search's points say nothing)."""
    if "status" not in ds:
        return []
    status = ds["status"]
    dims = [str(d) for d in status.dims]
    swept = [d for d in ds.iotune.swept if d in dims]
    errors = None
    if "error" in ds:
        errors = ds["error"].broadcast_like(status).transpose(*status.dims).values
    points = []
    for index in np.ndindex(status.shape):
        coords = {d: status[d].values[index[dims.index(d)]] for d in swept}
        ok = str(status.values[index]) != "not_applicable"
        points.append((coords, ok, "" if errors is None else str(errors[index])))
    return applies_nowhere({d: list(ds[d].values) for d in swept}, points)


def nowhere(ds: xr.Dataset) -> list[str]:
    """One line per swept value that no grid point could apply, with the first reason.

    Such a value leaves an empty row in tables and an empty entry in legends; it is
    named once instead (``shuffle=bit: applies nowhere: ...``).
    """
    return [found.line for found in nowhere_found(ds)]
