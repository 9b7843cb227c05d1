"""The best configuration of a sweep under an objective, and how sure that is.

Reads only the results Dataset, through ``ds.iotune``: objectives, weights and
constraints are :mod:`iotune.results.objective`'s, and the ranking is
``ds.iotune.rank`` (``ds.iotune.best`` is its winner).  The winner is compared
with the runner-up by a one-sided Mann-Whitney test over their repeats
(:class:`iotune.results.stats.Separation`) and with the sweep's baseline
(contiguous, no compression, library defaults) or, when the spec names one (a
spec made from a Darshan log), the application's own settings, and comes with
exports to paste.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.analysis import exports
from iotune.analysis.busy import cheapest_busy
from iotune.analysis.cost import whole_cost
from iotune.analysis.decision import decide
from iotune.analysis.points import hints_of, storage_of, target_of
from iotune.backends import readability
from iotune.core.errors import RecommendError
from iotune.model.objective import Objective
from iotune.model.readers import Readability
from iotune.results import partial, ties
from iotune.results.accessor import plain  # and ds.iotune
from iotune.results.batches import batches_of, loader_at, loader_figures
from iotune.results.gaps import MIN_REPEATS
from iotune.results.objective import Candidate
from iotune.results.speedup import layouts, not_measured, vs_baselines
from iotune.results.stats import ALPHA

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "BASELINE",
    "Candidate",
    "Objective",
    "RecommendError",
    "Recommendation",
    "recommend",
    "recommend_with",
]

#: preferred baseline values per parameter, first match wins (:data:`iotune.results.ties.BASELINE`)
BASELINE = ties.BASELINE


@dataclass
class Recommendation:
    """What :func:`recommend` found; ``to_dict`` is its JSON form.

    ``separated`` is the winner's verdict against the runner-up (``None``: no
    runner-up, or too few repeats to tell) and ``separation`` says it in one line;
    the figures of the test are ``winner.separation``.  ``current`` holds the
    application's own settings when the spec has a ``baseline`` (then ``baseline``
    is that point and ``speedup`` is over it); it is left out of ``to_dict`` otherwise.
    """

    weights: dict[str, float]
    winner: Candidate
    runner_up: Candidate | None
    baseline: Candidate | None
    baseline_note: str
    separated: bool | None
    separation: str
    speedup: dict[str, float]
    constraints: dict[str, Any]
    candidates: int
    repeats: int
    exports: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the fewest and most timed repeats of the qualifying configurations
    repeats_used: tuple[int, int] | None = None
    #: the run's noise floor of each objective metric (relative), where it measured one
    noise: dict[str, float] = field(default_factory=dict)
    current: dict[str, Any] = field(default_factory=dict)
    #: share of importance per parameter (sum 1) and the line that says it
    importance: dict[str, float] = field(default_factory=dict)
    importance_text: str = ""
    #: why importance is left out (an extra not installed: what installs it); empty otherwise
    importance_unavailable: str = ""
    #: why the objective is the default one (:func:`iotune.model.objective.default_metric`);
    #: empty when it was given
    objective_default: str = ""
    #: the winner's speedup over each named baseline (the spec's ``baselines``) per pattern:
    #: ``{baseline, pattern, speedup, low, high, size_ratio}`` (:mod:`iotune.results.speedup`)
    vs_baselines: list[dict[str, Any]] = field(default_factory=list)
    #: what each baseline laid out, and the baselines not measured with why
    baseline_layouts: dict[str, str] = field(default_factory=dict)
    baselines_missing: list[str] = field(default_factory=list)
    #: the winner's median ``samples_per_s``, ``first_batch_s`` and ``utilisation`` (the
    #: batches pattern), and ``loader``: who measured them (``torch`` or ``iotune``)
    batches: dict[str, Any] = field(default_factory=dict)
    #: the baseline is not beaten beyond noise: :class:`iotune.results.ties.Keep` as a
    #: dict, and the line that says so first
    keep: dict[str, Any] = field(default_factory=dict)
    keep_text: str = ""
    #: how a tie among the leaders was broken (empty: no tie)
    tie_note: str = ""
    #: the leader cannot be told from configurations beyond ``max_tie_loss``: said first
    undecided: str = ""
    #: the pick's whole cost: what it is compared with (empty: nothing measured to compare
    #: with) and its speedup rows on every metric (:mod:`iotune.analysis.cost`)
    cost_against: str = ""
    cost: list[dict[str, Any]] = field(default_factory=list)
    #: who opens the pick without plugins and who needs which plugin
    #: (:class:`iotune.model.readers.Readability`), and what ``--portable`` left out
    readers: Readability | None = None
    portable_note: str = ""
    #: points a stopped run left short of their repeats (:mod:`iotune.results.partial`)
    partial_note: str = ""
    #: the winner's seconds a call (``metric``, ``median``, ``low``, ``high``: the 95 %
    #: interval) when the objective is one pattern of the user's own code, ranked by it
    seconds_per_call: dict[str, Any] = field(default_factory=dict)
    #: in place, virtual or rewritten, with break-evens (:mod:`iotune.analysis.decision`)
    decision: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.batches:  # the JSON of sweeps without the batches pattern stays as it was
            del data["batches"]
        if not self.partial_note:  # the JSON of complete runs stays as it was
            del data["partial_note"]
        if not self.current:  # the JSON of sweeps without a baseline stays as it was
            del data["current"]
        if not self.seconds_per_call:  # likewise without an objective of the user's code
            del data["seconds_per_call"]
        if not self.decision:  # likewise without ``compare``
            del data["decision"]
        if not (self.vs_baselines or self.baselines_missing):  # likewise without baselines
            for name in ("vs_baselines", "baseline_layouts", "baselines_missing"):
                del data[name]
        return _jsonable(data)


def recommend(
    results: str | Path | xr.Dataset,
    *,
    objective: str | None = None,
    weights: str | Mapping[str, float] | None = None,
    max_size: int | str | None = None,
    max_ratio_loss: float | str | None = None,
    max_error: float | str | None = None,
    min_digits: int | str | None = None,
    variable: str | None = None,
    alpha: float = ALPHA,
    importance: bool = True,
    max_tie_loss: float | str | None = None,
) -> Recommendation:
    """Pick the best configuration of a sweep, its runner-up and exports to paste.

    Parameters
    ----------
    results
        A results file, its directory or an opened results Dataset.
    objective
        One metric: ``"write"`` or ``"read:<pattern>"`` (weights as below are
        taken too).  Default: ``weights``, else
        :func:`~iotune.model.objective.default_metric`'s (the user's own read
        pattern, the loader's, ``timeseries``, the first read pattern, ``write``).
    weights
        Several metrics, ``"write=1,read:timeseries=3"`` or a mapping.
    max_size
        Largest stored size allowed (bytes or ``"64MiB"``).
    max_ratio_loss
        Fraction from 0 to 1: candidates must compress to at least
        ``(1 - max_ratio_loss)`` times the best compression ratio in the sweep.
    max_error, min_digits
        What lossy quantisation may cost (largest absolute error, significant digits
        kept); a quantised configuration is recommended only under one of them.
    variable
        Variable name in the exports; default the workload's own (user data)
        or ``data``.
    alpha
        Significance level of the winner against the runner-up.
    importance
        Also say which parameters matter (:mod:`iotune.analysis.importance`).
    max_tie_loss
        Fraction from 0 to 1 (default 0.05): among configurations the repeats cannot
        tell apart, a smaller file is picked only when at most this much slower.

    Returns
    -------
    Recommendation

    Raises
    ------
    RecommendError
        An unknown metric, a bad weight, constraint or ``alpha``, or no configuration left.
    """
    goal = Objective.parse(
        objective,
        weights=weights,
        max_size=max_size,
        max_ratio_loss=max_ratio_loss,
        max_error=max_error,
        min_digits=min_digits,
        alpha=alpha,
        max_tie_loss=max_tie_loss,
    )
    return recommend_with(results, goal, variable=variable, importance=importance)


def recommend_with(
    results: str | Path | xr.Dataset,
    objective: Objective,
    *,
    variable: str | None = None,
    importance: bool = True,
) -> Recommendation:
    """:func:`recommend` under an :class:`~iotune.model.objective.Objective` made elsewhere.

    Raises
    ------
    RecommendError
        A metric the results do not have, or no configuration left.
    """
    from iotune.results.dataset import open_results

    ds = open_results(results) if isinstance(results, str | Path) else results
    ranking = ds.iotune.rank_by(objective)
    chosen, kept = ranking.objective.weights or {}, ranking.ranked
    current = ties.current_settings(ds)
    chosen_pick = ties.stable_pick(
        ranking, ties.defaults_of(ds), ties.objective_noise(ds, ranking.objective.weights or {})
    )
    winner, runner, sep = chosen_pick.winner, chosen_pick.runner_up, chosen_pick.separation
    cheap, busy_note = cheapest_busy(ds, ranking.candidates, chosen)
    if cheap is not None and cheap is not winner:  # speed beyond the step's buys nothing
        winner, runner = cheap, winner
    if current:
        baseline, note = _current(current, ranking.candidates)
    else:
        baseline, note = _baseline(ds, ranking.candidates, winner)
    repeats = int(ds.sizes.get("repeat", 1))
    noise = ds.iotune.noise.get(next(iter(chosen))) if len(chosen) == 1 else None
    # the pick's whole cost: every read pattern and the write, not the objective alone
    speedups = vs_baselines(ds, {p: winner.coords for p in ("write", *ds.iotune.patterns)})
    if current:  # the application's own settings, measured as a grid point
        kept_settings = ties.keep(winner, baseline, chosen, noise=noise)
    else:  # what the user has anyway: their file's layout, else the library's default
        few = noise if repeats < MIN_REPEATS else None  # the floor only without an interval
        kept_settings = ties.keep_named(speedups, layouts(ds), chosen, noise=few)
    speedup = {}
    if baseline is not None:
        speedup = {m: winner.median[m] / baseline.median[m] for m in chosen}
        speedup["score"] = winner.score / baseline.score
    found = _importance(ds, chosen) if importance else None
    against, cost = whole_cost(
        ds, winner, baseline, current=bool(current), named=speedups, layouts=layouts(ds)
    )
    return Recommendation(
        cost_against=against,
        cost=cost,
        importance=found.shares if found else {},
        importance_text=found.text() if found else "",
        importance_unavailable=found.unavailable if found else "",
        objective_default=ranking.objective.why,
        weights=chosen,
        winner=winner,
        runner_up=runner,
        baseline=baseline,
        baseline_note=note,
        keep=asdict(kept_settings) if kept_settings else {},
        keep_text=kept_settings.text(winner.label, _objective_name(chosen))
        if kept_settings
        else "",
        tie_note=" ".join(n for n in (busy_note, chosen_pick.note) if n),
        undecided=chosen_pick.undecided_text,
        separated=None if sep is None else sep.beats,
        separation="only one configuration met the constraints" if sep is None else sep.text,
        speedup=speedup,
        constraints=ranking.objective.limits,
        candidates=len(kept),
        repeats=repeats,
        repeats_used=_repeats_used(kept),
        noise={m: v for m, v in ds.iotune.noise.items() if m in chosen},
        exports=exports.all_exports(
            winner.settings,
            target_of(ds, variable),
            hints=hints_of(ds, winner.settings),
            storage=storage_of(ds),
            batches=batches_of(ds),
        ),
        current=current,
        vs_baselines=speedups,
        baseline_layouts=layouts(ds),
        baselines_missing=not_measured(ds),
        batches=_batches(ds, winner.coords),
        readers=readability(winner.settings),
        portable_note=ranking.note,
        partial_note=partial.note(ds),
        seconds_per_call=_per_call(winner, chosen),
        decision=decide(ds, ranking.ranked, objective=chosen),
    )


def _per_call(winner: Candidate, weights: Mapping[str, float]) -> dict[str, Any]:
    """The winner's seconds a call under an objective of one pattern of the user's code."""
    metric = next(iter(weights)) if len(weights) == 1 else ""
    found = winner.seconds_per_call.get(metric)
    return {"metric": metric, **found} if found else {}


def _batches(ds: xr.Dataset, coords: Mapping[str, Any]) -> dict[str, Any]:
    """The batches figures at ``coords`` and who measured them (empty without the pattern)."""
    found: dict[str, Any] = dict(loader_figures(ds, coords))
    return found | {"loader": loader_at(ds, coords)} if found else {}


def _objective_name(weights: Mapping[str, float]) -> str:
    if len(weights) == 1:
        return next(iter(weights))
    return ",".join(f"{m}={w:g}" for m, w in weights.items())


def _repeats_used(cands: list[Candidate]) -> tuple[int, int] | None:
    counts = [
        max(sum(not math.isnan(v) for v in values) for values in c.repeats.values())
        for c in cands
        if c.repeats
    ]
    return (min(counts), max(counts)) if counts else None


def _current(current: Mapping[str, Any], cands: list[Candidate]) -> tuple[Candidate | None, str]:
    """The application's own settings as the baseline, if that point was measured."""
    shown = " ".join(f"{d}={v}" for d, v in current.items())
    matching = [c for c in cands if all(c.coords.get(d, v) == v for d, v in current.items())]
    if not matching:
        why = "did not succeed or were excluded by a constraint"
        return None, f"no baseline: your current settings ({shown}) {why}"
    return matching[0], f"baseline: your current settings ({shown})"


def _importance(ds: xr.Dataset, weights: Mapping[str, float]) -> Any:
    from iotune.analysis.importance import importance

    return importance(ds, weights=dict(weights))


def _baseline(
    ds: xr.Dataset, cands: list[Candidate], winner: Candidate
) -> tuple[Candidate | None, str]:
    """The baseline point: preferred default values, otherwise as close to the winner."""
    wanted, missing = {}, []
    for dim, prefs in BASELINE.items():
        if dim not in winner.coords:
            continue
        values = [plain(v) for v in ds[dim].values]
        if dim == "hints":
            prefs = (*prefs, *ties.empty_hint_sets(ds))
        found = next((p for p in prefs if p in values), None)
        if found is None:
            missing.append(f"no {'/'.join(prefs)} {dim} in the sweep")
        else:
            wanted[dim] = found
    if not wanted:
        if "baseline" in ds.dims:  # the named baselines, measured beside the grid, follow
            return None, "no default point in the grid: the speedups are over the baselines below"
        return None, "no baseline: the sweep has no contiguous, uncompressed or default point"
    matching = [c for c in cands if all(c.coords[d] == v for d, v in wanted.items())]
    if not matching:
        shown = " ".join(f"{d}={v}" for d, v in wanted.items())
        return None, f"no baseline: the baseline point {shown} did not succeed"
    best = max(matching, key=lambda c: sum(c.coords[d] == v for d, v in winner.coords.items()))
    note = "baseline: " + " ".join(f"{d}={v}" for d, v in wanted.items())
    rest = [d for d in winner.coords if d not in wanted]
    if rest:
        note += f", other settings as close to the winner as measured ({', '.join(rest)})"
    if missing:
        note += "; " + "; ".join(missing)
    return best, note


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return plain(value)
