"""The texts the ``iotune`` command prints, built from plans, results and backends.

Kept apart from :mod:`iotune.app.api` (which does things) so the API stays about
behaviour and the command line about arguments; notebooks may print these too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import xarray as xr

    from iotune.analysis.recommend import Recommendation
    from iotune.model.objective import Objective
    from iotune.results.summary import Nowhere
    from iotune.runner.plan import Plan


def plan_text(plan: Plan) -> str:
    """One line per trial, then one per grid point that does not apply, with the reason.

    A swept value that applies at no grid point is named once, with the reason, in
    place of a line for each of its points (as ``run`` and ``show`` name it).
    """
    skipped = [p for p in plan.points if not p.applicable]
    from iotune.model import parameters

    lines = [
        f"{len(plan.trials)} trials ({len(plan.points)} grid points, {len(skipped)} not applicable)"
    ]
    lines += [f"  {t.id}  {t.backend:<8} {t.label()}" for t in plan.trials]
    found = plan_nowhere(plan)
    named = {(n.dim, n.value) for n in found}
    for point in skipped:
        if any((k, v) in named for k, v in point.coords.items()):
            continue  # said once below
        # labelled as the trial lines above label theirs (alignment=1MiB, not 1048576)
        where = " ".join(f"{k}={parameters.show(k, v)}" for k, v in point.coords.items())
        lines.append(f"  {'-' * 12}  {where}: {point.reason}")
    lines += [f"  {'-' * 12}  {n.line}" for n in found]
    for base in plan.baselines:  # the spec's baselines: measured by a trial above, or why not
        lines.append(
            f"  {base.trial_id or '-' * 12}  baseline {base.label}: {base.reason or 'measured'}"
        )
    return "\n".join(lines)


def plan_nowhere(plan: Plan) -> list[Nowhere]:
    """The swept values of a plan that no grid point applies, each with its reason."""
    from iotune.results.summary import applies_nowhere

    points = ((p.coords, p.applicable, p.reason) for p in plan.points)
    return applies_nowhere(plan.coords, points)


def nowhere_lines(ds: xr.Dataset) -> list[str]:
    """Swept values no grid point could apply, each named once with the reason."""
    from iotune.results.summary import nowhere

    return nowhere(ds)


def counts_text(ds: xr.Dataset) -> str:
    """``"12 ok, 4 not_applicable"``: how the grid points of a results Dataset ended."""
    return ", ".join(f"{n} {s}" for s, n in sorted(ds.iotune.counts().items()))


def efficiency_line(ds: xr.Dataset) -> str | None:
    """How busy the run kept its workers (:mod:`iotune.runner.efficiency`); None if unknown."""
    from iotune.runner.efficiency import Efficiency

    figures = Efficiency.from_attrs(ds.attrs)
    return None if figures is None else figures.line()


def failures_lines(ds: xr.Dataset) -> list[str]:
    """One line per distinct reason the failed points of ``ds`` failed, with what they share.

    ``"4 trials failed: <reason> (codec=blosc-lz4 shuffle=none)"``: the settings named
    are the swept ones every point of the group has in common, so a user sees which
    part of the grid a library refused, once, instead of a line per trial.
    """
    import numpy as np

    if "status" not in ds or "error" not in ds:
        return []
    dims = ds["status"].dims
    coords: list[dict[str, str]] = [{}]  # a sweep that swept nothing: one point, no coordinates
    states = np.atleast_1d(ds["status"].values)
    errors = np.atleast_1d(ds["error"].values)
    if dims:
        status = ds["status"].stack(point=dims)
        states = status.values
        errors = ds["error"].transpose(*dims).stack(point=dims).values
        coords = [
            {str(k): str(v) for k, v in zip(dims, p, strict=True)} for p in status["point"].values
        ]
    groups: dict[str, list[dict[str, str]]] = {}
    for i in np.flatnonzero(states == "failed"):
        reason = str(errors[i]).split(" [library said:", 1)[0] or "no reason recorded"
        groups.setdefault(reason, []).append(coords[i])
    lines = []
    for reason, points in groups.items():
        shared = {
            k: v for k, v in points[0].items() if ds.sizes[k] > 1 and all(p[k] == v for p in points)
        }
        where = " ".join(f"{k}={v}" for k, v in shared.items())
        noun = "trial" if len(points) == 1 else "trials"
        lines.append(f"{len(points)} {noun} failed: {reason}" + (f" ({where})" if where else ""))
    return lines


def results_text(ds: xr.Dataset, *, include_not_applicable: bool = False) -> str:
    """Where and when a sweep ran, its table, and the best configuration per metric."""
    from iotune.results import summary

    attrs = ds.attrs
    # where the trials stored their data: an object store, or the scratch file system
    where = attrs.get("storage_url") or attrs.get("provenance_scratch_fs_type", "?")
    head = (
        f"sweep {attrs.get('name')!r} on {attrs.get('provenance_host', '?')} "
        f"({where}), {attrs.get('started', '')}"
    )
    table = summary.table(ds, include_not_applicable=include_not_applicable)
    return "\n".join([head, table, best_text(ds)])


def best_text(ds: xr.Dataset) -> str:
    """The pick with its whole cost, the best configuration per metric (median over
    repeats), then each one's speedup over the baselines.
    """
    from iotune.results import summary

    return "\n".join([*pick_lines(ds), summary.format_best(ds), *baselines_lines(ds)])


def pick_lines(ds: xr.Dataset) -> list[str]:
    """What ``iotune recommend`` says first, in a few lines (its default objective).

    "keep your settings" when that is the answer, the tie and its tie-break, and the
    pick against what you have on every metric and the stored size
    (:func:`iotune.analysis.report.render_summary`); empty when nothing succeeded.
    """
    from iotune.analysis.report import render_summary
    from iotune.views.decision_text import decision_lines

    rec = pick(ds)
    return [] if rec is None else [*render_summary(rec), *decision_lines(rec.decision)]


def pick_dict(ds: xr.Dataset) -> dict[str, Any]:
    """:func:`pick_lines` for scripts: the objective (why, when the default), the pick,
    "keep", the tie and the cost."""
    rec = pick(ds)
    if rec is None:
        return {}
    found = rec.to_dict()
    keys: tuple[str, ...] = ("weights", "objective_default", "keep", "keep_text", "tie_note")
    keys += ("cost_against", "cost", "readers", "seconds_per_call", "decision")
    return {"winner": rec.winner.label, **{k: found[k] for k in keys if k in found}}


def pick(ds: xr.Dataset) -> Recommendation | None:
    """``iotune recommend``'s recommendation under its default objective (a search: its
    own), without importance; None when no trial succeeded.
    """
    from iotune.analysis.recommend import recommend_with
    from iotune.core.errors import RecommendError

    try:
        return recommend_with(ds, _objective_of(ds), importance=False)
    except RecommendError:  # no successful trial: the table says why
        return None


def _objective_of(ds: xr.Dataset) -> Objective:
    """The search's own objective for a search's results, else recommend's default."""
    from iotune.model.objective import Objective

    chosen = str(ds.attrs.get("search_objective", ""))
    if not chosen or chosen.startswith("default"):
        return Objective()
    return Objective.parse(weights=chosen) if "=" in chosen else Objective.parse(chosen)


def baselines_lines(ds: xr.Dataset) -> list[str]:
    """Each read pattern's best configuration against the sweep's named baselines.

    Empty for results without ``baselines`` (:mod:`iotune.results.speedup`).
    """
    from iotune.results import speedup
    from iotune.results.baselines import has_baselines

    if not has_baselines(ds):
        return []
    chosen = speedup.each_best(ds)
    return speedup.speedup_text(
        speedup.vs_baselines(ds, chosen),
        layouts=speedup.layouts(ds),
        missing=speedup.not_measured(ds),
        what="each pattern's best",
        configs=speedup.fastest_labels(ds, chosen),
    )


def search_text(ds: xr.Dataset) -> str:
    """What a search did: strategy, budget, trials, points visited, and its pick.

    A trial budget counts full-size trials: with fidelity rungs, what the trials cost
    (a trial at fidelity f counts as f) is shown beside how many ran.
    """
    import json

    from iotune.core.units import format_span

    attrs = ds.attrs
    kinds = [str(k) for k in ds["search_kind"].values] if "search_kind" in ds else []
    again = sum(k == "remeasure" for k in kinds)
    if attrs.get("search_budget_unit") == "s":
        spent = (
            f"{len(kinds)} trials in {format_span(float(attrs.get('search_spent', 0)))} of a "
            f"{format_span(float(attrs.get('search_budget', 0)))} budget"
        )
    elif len(json.loads(str(attrs.get("search_fidelity_rungs") or "[]"))) > 1:
        spent = (
            f"{len(kinds)} trials costing {float(attrs.get('search_spent', 0)):g} of a budget "
            f"of {attrs.get('search_budget')} full-size trials (cheap trials count as their share)"
        )
    else:
        spent = f"{len(kinds)} of {attrs.get('search_budget')} trials"
    visited = f"{ds.sizes.get('point', 0)} of {attrs.get('search_applicable')} applicable points"
    if "fidelity" in ds.coords:  # a point per configuration and fidelity
        configs = len(
            {
                tuple(str(ds[n].values[i]) for n in str(attrs["swept"]).split() if n != "fidelity")
                for i in range(ds.sizes["point"])
            }
        )
        visited = (
            f"{configs} of {attrs.get('search_applicable')} applicable configurations "
            f"({ds.sizes['point']} points at {len(set(ds['fidelity'].values.tolist()))} fidelities)"
        )
    head = (
        f"search {attrs.get('name')!r}: {attrs.get('search_strategy')} (seed "
        f"{attrs.get('search_seed')}), {spent} "
        f"({again} re-measurement{'' if again == 1 else 's'}), {visited} visited"
    )
    head += "".join(f"\n{line}" for line in _search_notes(ds))
    pick = str(attrs.get("search_recommended") or "")
    if not pick:
        ok = int((ds["status"] == "ok").sum()) if "status" in ds else 0
        if ok:  # measured, but none within max_size, max_ratio_loss or the error limits
            return f"{head}\nno measured configuration met the constraints ({ok} succeeded)"
        return f"{head}\nno configuration succeeded"
    shown = str(attrs.get("search_recommended_label") or "")
    if not shown:  # results of earlier releases: the coordinates as they are
        import json

        from iotune.model.parameters import show

        coords = json.loads(pick)
        shown = " ".join(f"{k}={show(k, v)}" for k, v in coords.items())
    shown += _a_call(ds, pick)
    text = f"{head}\nrecommended for {attrs.get('search_objective')}: {shown}"
    undecided = str(attrs.get("search_undecided") or "")
    if undecided:  # said first, as recommend says it: the name below is the fastest measured
        text = f"{head}\n{undecided}\nrecommended for {attrs.get('search_objective')}: {shown}"
    tie = str(attrs.get("search_tie") or "")
    return f"{text}\n{tie}" if tie else text


def _a_call(ds: xr.Dataset, pick: str) -> str:
    """`` (163 ms a call)`` when the search ranked by the user's own code, else empty."""
    import json

    from iotune.core.units import format_duration
    from iotune.results import percall, summary

    weights = json.loads(str(ds.attrs.get("search_weights") or "{}"))
    metric = next(iter(weights)) if len(weights) == 1 else ""
    if not percall.per_call(ds, metric):
        return ""
    found = summary.seconds_per_call(ds, metric, json.loads(pick))
    return f" ({format_duration(found['s_per_call'])} a call)" if found else ""


def _search_notes(ds: xr.Dataset) -> list[str]:
    """Fidelity rungs, stopped trials and priors, when the search had them."""
    import json

    attrs, notes = ds.attrs, []
    rungs = json.loads(str(attrs.get("search_fidelity_rungs") or "[]"))
    if rungs:
        kinds = [str(k) for k in ds["search_kind"].values]
        shown = ", ".join(f"{r:g}" for r in rungs)
        notes.append(
            f"fidelity rungs {shown}: {kinds.count('promote')} promotions to full size, "
            f"{kinds.count('control')} controls"
        )
        if attrs.get("search_fidelity_fallback"):
            notes.append(str(attrs["search_fidelity_fallback"]))
    if "repeats_stop" in ds:
        early = int((ds["repeats_stop"] == "stopped_early").sum())
        if early:
            notes.append(
                f"{early} points stopped early (hopeless beyond noise): not precise figures"
            )
    for prior in json.loads(str(attrs.get("search_prior") or "[]")):
        where = "this machine" if prior["same_host"] else f"another machine ({prior['host']})"
        what = "this workload" if prior["same_workload"] else "another workload"
        notes.append(
            f"prior {prior['source']}: {where}, {what}; {prior['seeds_measured']} of its best "
            f"measured first, sharing {', '.join(prior['overlap'])}"
        )
    return notes


def store_limit_text(limit: dict[str, Any]) -> str:
    """What ``iotune calibrate --storage`` found: each level, the limits, latency, the cache."""
    from iotune.core.units import format_size
    from iotune.runner.calibrate import cache_path

    local = str(limit["storage_url"]).startswith("file://")
    where = limit["endpoint"] or ("this host" if local else "the provider's default endpoint")
    lines = [
        f"object store limit of {limit['storage_url']} at {where}, one "
        f"{format_size(limit['size_bytes'])} object in {format_size(limit['part_bytes'])} "
        f"parts, from {limit['host']}:",
        "  in flight      PUT MiB/s      GET MiB/s",
    ]
    for level in limit["levels"]:
        put_best = " *" if level["in_flight"] == limit["write_in_flight"] else "  "
        get_best = " *" if level["in_flight"] == limit["read_in_flight"] else "  "
        lines.append(
            f"  {level['in_flight']:>9}  {level['put_MiBps']:>11.0f}{put_best}  "
            f"{level['get_MiBps']:>11.0f}{get_best}"
        )
    small = limit["small_get"]
    lines.append(
        f"  write limit {limit['write_MiBps']:.0f} MiB/s, read limit "
        f"{limit['read_MiBps']:.0f} MiB/s (* the best level)"
    )
    lines.append(
        f"  small GET ({format_size(small['size_bytes'])}, {small['count']} one at a time): "
        f"first byte median {small['ttfb_ms_median']:.1f} ms, p99 {small['ttfb_ms_p99']:.1f} ms"
    )
    if limit.get("retries"):
        lines.append(
            f"  warning: the store throttled {limit['retries']} requests (503 SlowDown/429); "
            "they were sent again and their wait is in the figures"
        )
    lines.append(f"saved to {cache_path()} (key {limit['key']}); sweeps on this store record it")
    return "\n".join(lines)
