"""A recommendation for the terminal (text) and for scripts (JSON)."""

from __future__ import annotations

import json
import math
import textwrap
from typing import TYPE_CHECKING

from iotune.analysis.cost import POINTS, cost_items, pack
from iotune.backends.layout_exports import PLUGIN_NOTE
from iotune.core.units import format_number, format_size
from iotune.results.percall import CALLS, a_call, said
from iotune.results.speedup import speedup_text

if TYPE_CHECKING:
    from iotune.analysis.recommend import Recommendation
    from iotune.results.objective import Candidate

FORMATS = ("text", "json")
#: the longest line of :func:`render_summary`
WIDTH = 100


_TITLES = {
    "xarray_netcdf4_encoding": "xarray, netCDF4 (ds.to_netcdf(path, encoding=encoding))",
    "xarray_zarr_encoding": "xarray, Zarr v3 (ds.to_zarr(path, encoding=encoding))",
    "netcdf4_create_variable": "netCDF4-python",
    "nccopy": "nccopy (rewrite an existing netCDF-4 file)",
    "h5py_create_dataset": "h5py (write the file as measured)",
    "h5repack": "h5repack (rewrite an existing HDF5/netCDF-4 file)",
    "lfs_setstripe": "Lustre striping of the output directory",
    "mpich_mpiio_hints": "MPI-IO hints, Cray/HPE MPICH",
    "romio_hints_file": "MPI-IO hints, ROMIO hints file",
    "zarr_object_write": "Zarr on the object store (write as measured)",
    "zarr_object_read": "Zarr on the object store (read, xarray)",
    "hdf5_object_upload": "upload to the object store (s3fs, multipart)",
    "hdf5_object_read": "h5py on the object store (fsspec file)",
    "hdf5_object_xarray": "xarray on the object store (h5netcdf)",
    "xarray_open": "xarray, open as measured (dask chunks)",
    "object_put": "obstore PUT (parts in flight)",
    "object_get": "obstore ranged GETs (parts in flight)",
    "object_get_ranges": "obstore get_ranges (coalesced)",
    "torch_dataset": "map-style Dataset (the batches pattern's samples)",
    "torch_dataloader": "PyTorch DataLoader (as the batches pattern read)",
}


def render_json(rec: Recommendation) -> str:
    """The recommendation as JSON, for scripts.

    ``separated`` and ``separation`` (the one line of :func:`render_text`) say whether
    the winner beats the runner-up beyond noise; ``winner.separation`` holds the rank
    test's figures (``p_value``, ``repeats``, ``shift``, ``difference``, ...).
    """
    return json.dumps(rec.to_dict(), indent=1)


def render_text(rec: Recommendation) -> str:
    """The recommendation for a terminal: winner, runner-up, baseline, then every export.

    Under the runner-up one line says whether the winner beats it beyond noise (a
    one-sided Mann-Whitney test over their repeats, :class:`iotune.results.stats.Separation`).
    """
    objective = ", ".join(f"{m}={w:g}" for m, w in rec.weights.items())
    if len(rec.weights) == 1:
        objective = next(iter(rec.weights))
    used = rec.repeats_used or (rec.repeats, rec.repeats)
    repeats = str(used[0]) if used[0] == used[1] else f"{used[0]}-{used[1]}"
    # the answer first (or that this noise cannot give one), then what was measured
    lines = [x for x in (rec.partial_note, rec.undecided, rec.keep_text) if x]
    measured = (
        f"{_figure(rec)}, median of {repeats} repeats; {rec.candidates} configurations qualify"
    )
    if rec.objective_default:  # which objective, and why, on a line of its own
        lines += [objective_line(rec), f"  {measured}"]
    else:
        lines.append(f"objective: {objective} ({measured})")
    if rec.noise:
        floors = ", ".join(f"{m} {v:.0%}" for m, v in rec.noise.items())
        lines.append(f"noise floor of this run (smallest difference it could see): {floors}")
    limits = rec.constraints
    if limits:
        shown: list[str] = []
        if "max_size" in limits:
            shown.append(f"stored size <= {format_size(limits['max_size'])}")
        if "max_ratio_loss" in limits:
            shown.append(f"compression ratio at most {limits['max_ratio_loss']:.0%} below the best")
        if "readers" in limits:
            shown.append(f"readers {', '.join(limits['readers'])} open the codec without plugins")
        lines.append(f"constraints: {', '.join(shown)}")
    lines += [rec.portable_note] if rec.portable_note else []
    lines += _candidate_lines("winner", rec.winner)
    lines += [f"{'':<11} {line}" for line in _readers_lines(rec)]
    if rec.batches:
        lines.append(
            f"{'':<11} batches: {format_number(rec.batches['samples_per_s'])} samples/s, "
            f"first batch after {format_number(rec.batches['first_batch_s'])} s (medians)"
            + _busy(rec.batches)
        )
        lines.append(f"{'':<11} {_measured_by(rec.batches.get('loader', ''))}")
    if rec.runner_up is not None:
        lines += _candidate_lines("runner-up", rec.runner_up)
    lines.append(f"  {rec.separation}")
    if rec.tie_note:
        lines.append(f"  {rec.tie_note}")
    lines += _baseline_lines(rec)
    if rec.cost and rec.cost[0]["baseline"] in POINTS:  # named baselines: in full below
        lines.append(
            f"the winner against {rec.cost_against}, every metric "
            f"({_ratio(rec)}, 95% bootstrap interval):"
        )
        lines += pack("", cost_items(rec.cost), indent="  ", width=WIDTH)
    lines += speedup_text(
        rec.vs_baselines,
        layouts=rec.baseline_layouts,
        missing=rec.baselines_missing,
        what=f"the winner ({rec.winner.label})",
    )
    if rec.importance_text:
        lines.append(rec.importance_text)
    lines.append("")
    lines.append("paste:")
    for name, export in rec.exports.items():
        lines.append(f"  {_TITLES.get(name, name)}:")
        body = export.get("text") or f"not expressible: {export['unavailable']}"
        lines += [f"    {line}" for line in body.splitlines()]
    if rec.winner.settings.get("codec", "none") not in ("none", "zlib") and any(
        k in rec.exports for k in ("nccopy", "h5repack")
    ):
        lines.append(f"  note: {PLUGIN_NOTE}")
    return "\n".join(lines)


def render_summary(rec: Recommendation, *, width: int = WIDTH) -> list[str]:
    """The recommendation in a few lines, as ``show``, ``run`` and the notebooks print it.

    What :func:`render_text` says first, in its words: "keep your settings" when that
    is the answer, else the pick; the tie and its tie-break; the pick's whole cost
    against what you have (every metric and the stored size, with intervals).
    """
    if len(rec.weights) == 1:
        objective = next(iter(rec.weights))
        flag = f"--objective {objective}"
    else:
        objective = ",".join(f"{m}={w:g}" for m, w in rec.weights.items())
        flag = f"--weights {objective}"
    said = rec.keep_text or f"recommended for {objective}: {rec.winner.label}"
    lines = []
    if rec.partial_note:  # the run was stopped: the pick stands on fewer repeats than asked
        lines += textwrap.wrap(rec.partial_note + ".", width=width, subsequent_indent="    ")
    if rec.undecided:  # said first: the pick below is the fastest, not a decided one
        lines += textwrap.wrap(rec.undecided + ".", width=width, subsequent_indent="    ")
    lines += textwrap.wrap(said, width=width, subsequent_indent="    ")
    notes = [rec.tie_note] if rec.tie_note else []
    if not rec.cost_against:  # nothing measured to compare with: say why
        notes.append(rec.baseline_note)
    for note in notes:
        lines += textwrap.wrap(note, width=width, initial_indent="  ", subsequent_indent="    ")
    if rec.cost:
        head = f"  against {rec.cost_against}, 95% intervals:"
        lines += pack(head, cost_items(rec.cost), indent="    ", width=width)
    elif rec.cost_against and not rec.keep_text:  # keep_text said it: the best measured
        lines += textwrap.wrap(
            f"the pick is {rec.cost_against} itself: nothing to gain",
            width=width,
            initial_indent="  ",
            subsequent_indent="    ",
        )
    if rec.objective_default:
        lines += textwrap.wrap(
            objective_line(rec), width=width, initial_indent="  ", subsequent_indent="    "
        )
    # not wrapped: a line's command is pasted whole; the few lines name readers only
    # when some need a plugin (recommend's full text names them always)
    needs_plugin = rec.readers is not None and bool(rec.readers.plugins)
    readers = _readers_lines(rec) if needs_plugin else []
    for note in [rec.portable_note, *readers]:
        if note.startswith("  "):  # a command to paste: not wrapped
            lines.append(f"  {note}")
        elif note:
            lines += textwrap.wrap(note, width=width, initial_indent="  ", subsequent_indent="    ")
    lines.append(f"  (more: iotune recommend {flag})")
    return lines


def _readers_lines(rec: Recommendation) -> list[str]:
    return rec.readers.lines() if rec.readers is not None else []


def objective_line(rec: Recommendation) -> str:
    """``objective: read:x (why it is the default; pass --objective to choose)``.

    Only for a default objective (``rec.objective_default``); a given one says itself.
    """
    from iotune.model.objective import Objective

    return f"objective: {Objective(weights=rec.weights, why=rec.objective_default).said}"


def _figure(rec: Recommendation) -> str:
    """What the objective's figures are: ``throughput in MiB/s``, ``seconds a call``."""
    calls = [m for m in rec.weights if rec.winner.unit(m) == CALLS]
    if not calls:
        return "throughput in MiB/s"
    if len(calls) == len(rec.weights):
        return "seconds a call of your code"
    return f"throughput in MiB/s, {', '.join(calls)} in seconds a call"


def _ratio(rec: Recommendation) -> str:
    """How the cost rows compare: a ratio of MiB/s, or of speed (calls a second)."""
    if any(rec.winner.unit(m) == CALLS for m in rec.weights):
        return "median speed ratio, time a call for your code"
    return "median MiB/s ratio"


def _candidate_lines(role: str, cand: Candidate) -> list[str]:
    lines = [f"{role + ':':<11} {cand.label}"]
    for metric, med in cand.median.items():
        if cand.unit(metric) == CALLS:  # ranked by the time a call; MiB/s as information
            storage = cand.from_storage.get(metric, float("nan"))
            extra = f", {format_number(storage)} MiB/s from storage" if storage == storage else ""
            lines.append(f"{'':<11} {metric:<16} {said(cand.seconds_per_call[metric])}{extra}")
            continue
        lines.append(f"{'':<11} {metric:<16} {format_number(med):>8} MiB/s  {_range(cand, metric)}")
    if len(cand.median) > 1:
        lines.append(f"{'':<11} {'score':<16} {cand.score:>8.3f} (1 = best of each metric)")
    lines.append(
        f"{'':<11} stored {format_size(cand.file_bytes, exact=False)}, ratio {cand.ratio:.2f}"
    )
    return lines


def _range(cand: Candidate, metric: str) -> str:
    """``[low to high]`` over the repeats; one repeat has none (``[n=1, no interval]``)."""
    n = sum(not math.isnan(v) for v in cand.repeats.get(metric, []))
    if n < 2 and cand.repeats:
        return f"[n={n}, no interval]"
    return f"[{format_number(cand.low[metric])} to {format_number(cand.high[metric])}]"


def _rate(mib_per_s: float) -> str:
    if mib_per_s >= 1024:
        return f"{format_number(mib_per_s / 1024)} GiB/s"
    return f"{format_number(mib_per_s)} MiB/s"


def _verdict(rec: Recommendation) -> list[str]:
    """One line against the application's own settings (a spec made from a Darshan log)."""
    base, win = rec.baseline, rec.winner
    if base is None:
        return []
    if len(win.median) == 1:
        metric = next(iter(win.median))
        shown = a_call if win.unit(metric) == CALLS else _rate
        now, best = shown(base.median[metric]), shown(win.median[metric])
        factor = rec.speedup.get(metric, float("nan"))
    else:
        now, best = f"score {base.score:.3f}", f"score {win.score:.3f}"
        factor = rec.speedup.get("score", float("nan"))
    if base.coords == win.coords:
        return [f"your current settings: {now}; they are the best measured{_gain(rec)}"]
    return [f"your current settings: {now}; recommended: {best}, {factor:.1f}x ({win.label})"]


def _gain(rec: Recommendation) -> str:
    """What a pick that is the grid's baseline point gains: nothing over that point, but
    the named baselines (your file, the library's default) may be slower: said below."""
    names = list(dict.fromkeys(str(r["baseline"]) for r in rec.vs_baselines))
    if not names:
        return ": nothing to gain"
    return (
        f": no gain over this point; its speedups over the named baselines "
        f"({', '.join(names)}) follow below"
    )


def _baseline_lines(rec: Recommendation) -> list[str]:
    base = rec.baseline
    if base is None:
        return [rec.baseline_note]
    if rec.current:
        head = _verdict(rec)
        if base.coords == rec.winner.coords:
            return [rec.baseline_note, *head]
        if rec.runner_up is not None and base.coords == rec.runner_up.coords:
            shown = [f"{'current:':<11} the runner-up ({base.label}), figures above"]
        else:
            shown = _candidate_lines("current", base)
        return [*shown, f"  {rec.baseline_note}", *head]
    if base.coords == rec.winner.coords:
        return [f"{rec.baseline_note}", f"  the winner is this baseline point itself{_gain(rec)}"]
    if rec.runner_up is not None and base.coords == rec.runner_up.coords:
        lines = [f"{'baseline:':<11} the runner-up ({base.label}), figures above"]
    else:  # printed once: the runner-up's figures are the baseline's when they are one point
        lines = _candidate_lines("baseline", base)
    lines.append(f"  {rec.baseline_note}")
    faster = ", ".join(f"{m} {x:.2f}x" for m, x in rec.speedup.items() if m != "score")
    size = rec.winner.file_bytes / base.file_bytes - 1
    lines.append(
        f"speedup over the baseline: {faster}; stored size {size:+.0%} "
        f"(ratio {rec.winner.ratio:.2f} vs {base.ratio:.2f})"
    )
    return lines


def _busy(figures: dict) -> str:
    """``, accelerator 93 % busy`` when the sweep simulated a step (utilisation known)."""
    found = figures.get("utilisation")
    return "" if found is None or found != found else f", accelerator {found:.0%} busy"


def _measured_by(loader: str) -> str:
    if loader == "torch":
        return "measured by torch's DataLoader over the exported Dataset (as below)"
    if loader == "xbatcher":
        return "measured by xbatcher's BatchGenerator over open_dataset (as below)"
    return "measured by iotune's own loader (PyTorch was not used)"
