"""Objectives over a results Dataset: which metrics count, how much, and under which limits.

An objective (:class:`iotune.model.objective.Objective`, made and checked there) is
one metric (``write``, ``read:<pattern>``) or weights over several
(``"write=1,read:timeseries=3"``), with its limits and ``alpha``.  A configuration's
score is the weighted geometric mean of its median throughputs, each relative to the
best median of that metric, so metrics in different ranges count by their weights
alone.  Constraints (``max_size``, ``max_ratio_loss``, ``max_error``, ``min_digits``,
and ``readers``, :mod:`iotune.results.portable`) remove candidates first.

Whether the winner beats the runner-up beyond noise is a one-sided Mann-Whitney U test
over their repeats (:func:`compare`, giving a :class:`iotune.results.stats.Separation`):
of the metric's throughput for one metric; for weights over several, of the combined
score of each repeat, computed as above from that repeat's metrics (a trial's repeat
writes, then reads, so its metrics belong together).

Plain data and arithmetic only: :class:`iotune.results.accessor.IotuneAccessor` reads
the Dataset (``ds.iotune.best``, ``ds.iotune.rank``) and :mod:`iotune.analysis.recommend`
builds on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.core.errors import RecommendError
from iotune.core.units import format_size
from iotune.model.objective import (
    ALPHA,
    METRIC_VARIABLES,
    Objective,
    check_alpha,
    parse_weights,
    split_metric,
)
from iotune.results.lossy import lossless_or_within
from iotune.results.portable import keep_readable
from iotune.results.stats import Separation, nanmedian, separate, spread

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "ALPHA",
    "METRIC_VARIABLES",
    "Candidate",
    "Objective",
    "Ranking",
    "compare",
    "constrain",
    "figures",
    "intervals",
    "own_patterns",
    "parse_objective",
    "parse_weights",
    "rank",
    "ranked",
    "repeat_scores",
    "scores",
    "split_metric",
]


@dataclass
class Candidate:
    """One successful grid point and its figures under an objective.

    ``median``, ``low`` and ``high`` per metric are over the repeats, ``repeats`` the
    repeats themselves (in the metric's ``units``: MiB/s, or calls/s for the user's
    own code; NaN where one failed), ``repeat_scores`` the combined score of each
    repeat, ``ci`` each metric's confidence interval of the median where the results
    hold one.  ``seconds_per_call`` says a calls/s metric as seconds a call:
    ``{metric: {median, low, high}}``, the interval from ``ci`` where there is one,
    else from the slowest and fastest repeat.  The winner of a ranking carries its
    ``separation`` from the runner-up.
    """

    coords: dict[str, Any]
    label: str
    settings: dict[str, Any]
    median: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    score: float
    score_low: float
    score_high: float
    file_bytes: float
    ratio: float
    repeats: dict[str, list[float]] = field(default_factory=dict)
    repeat_scores: list[float] = field(default_factory=list)
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    separation: Separation | None = None
    #: what quantisation cost (``max_abs_error``, ``digits_kept``); empty when lossless
    errors: dict[str, float] = field(default_factory=dict)
    #: each metric's unit (``MiB/s``, ``calls/s``); a metric left out is MiB/s
    units: dict[str, str] = field(default_factory=dict)
    #: median MiB/s from storage of each calls/s metric: information, not ranked by
    from_storage: dict[str, float] = field(default_factory=dict)
    seconds_per_call: dict[str, dict[str, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for metric, unit in self.units.items():
            if unit == "calls/s" and metric in self.median:
                low, high = self.ci.get(metric, (self.low[metric], self.high[metric]))
                self.seconds_per_call[metric] = {
                    "median": _inverse(self.median[metric]),
                    "low": _inverse(high),  # the fewest seconds: the most calls a second
                    "high": _inverse(low),
                }

    def unit(self, metric: str) -> str:
        """The unit of ``metric``'s figures: ``MiB/s`` or ``calls/s``."""
        return self.units.get(metric, "MiB/s")

    @property
    def beats_runner_up(self) -> bool | None:
        """The winner's :attr:`separation` verdict (``None``: cannot tell, or not the winner)."""
        return None if self.separation is None else self.separation.beats

    @property
    def p_value(self) -> float | None:
        """The p-value of the winner against the runner-up (:attr:`separation`)."""
        return None if self.separation is None else self.separation.p_value


@dataclass
class Ranking:
    """Every successful candidate (grid order) and those meeting the limits, best first."""

    objective: Objective
    candidates: list[Candidate]
    ranked: list[Candidate]
    alpha: float = ALPHA
    #: what the portability limit left out, in one line (empty: nothing)
    note: str = ""

    @property
    def best(self) -> Candidate:
        return self.ranked[0]

    @property
    def separation(self) -> Separation | None:
        """The winner against the runner-up; ``None`` with a single candidate."""
        return self.best.separation


def _inverse(x: float) -> float:
    return 1.0 / x if x > 0 and np.isfinite(x) else float("nan")


def own_patterns(ds: xr.Dataset) -> tuple[str, ...]:
    """The read patterns of ``ds`` that are the user's own code, in the sweep's order."""
    import json

    found = json.loads(str(ds.attrs.get("provenance_user_patterns", "[]")))
    return tuple(str(entry["name"]) for entry in found)


def parse_objective(
    allowed: Sequence[str],
    objective: str | None = None,
    weights: str | Mapping[str, float] | None = None,
    *,
    max_size: int | str | None = None,
    max_ratio_loss: float | str | None = None,
    max_error: float | str | None = None,
    min_digits: int | str | None = None,
) -> Objective:
    """:meth:`Objective.parse` of the options, resolved against the metrics ``allowed``.

    Without ``objective`` and ``weights``: :func:`iotune.model.objective.default_metric`'s.

    Raises
    ------
    RecommendError
        An unknown metric, a bad weight or constraint (the message names the option).
    """
    return Objective.parse(
        objective,
        weights=weights,
        max_size=max_size,
        max_ratio_loss=max_ratio_loss,
        max_error=max_error,
        min_digits=min_digits,
    ).resolved(allowed)


def scores(
    spreads: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    weights: Mapping[str, float],
    ok: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each point's score from its median, slowest and fastest repeat of every metric.

    ``spreads`` maps a metric to (median, min, max) arrays over the points; each
    metric counts relative to its best median among the ``ok`` points.
    """
    total = sum(weights.values())
    best = {m: float(np.nanmax(spreads[m][0][ok])) for m in weights}
    out = []
    for which in range(3):
        logs = sum(
            w * np.log(np.maximum(spreads[m][which], 1e-300) / best[m]) for m, w in weights.items()
        )
        out.append(np.exp(logs / total))
    return out[0], out[1], out[2]


def constrain(cands: list[Candidate], limits: Mapping[str, Any]) -> list[Candidate]:
    """The candidates within ``limits``.

    Raises
    ------
    RecommendError
        No candidate is left; the message says what would be.
    """
    kept = list(cands)
    if "max_size" in limits:
        kept = [c for c in kept if c.file_bytes <= limits["max_size"]]
        if not kept:
            smallest = min(c.file_bytes for c in cands)
            raise RecommendError(
                f"--max-size: no successful configuration is at most "
                f"{format_size(limits['max_size'])}; the smallest stored size is "
                f"{format_size(smallest, exact=False)}"
            )
    lossy = [c for c in kept if not lossless_or_within(c.errors, limits)]
    if lossy:
        kept = [c for c in kept if c not in lossy]
        if not kept:
            raise RecommendError(
                f"--max-error/--min-digits: all {len(lossy)} remaining configurations quantise "
                "beyond the limit (or no limit was given: a lossy configuration needs one)"
            )
    if "max_ratio_loss" in limits:
        # the best ratio among what may be recommended: not a quantised one beyond the limit
        best = max(c.ratio for c in cands if lossless_or_within(c.errors, limits))
        floor = (1 - limits["max_ratio_loss"]) * best
        kept = [c for c in kept if c.ratio >= floor - 1e-12]
        if not kept:
            raise RecommendError(
                f"--max-ratio-loss: no configuration within the size limit compresses to at "
                f"least {floor:.2f} (best ratio {best:.2f}); allow a larger loss or size"
            )
    return kept


def ranked(cands: list[Candidate]) -> list[Candidate]:
    """Best score first; among equal scores the smaller stored size."""
    return sorted(cands, key=lambda c: (-c.score, c.file_bytes))


def rank(goal: Objective, cands: list[Candidate], alpha: float | None = None) -> Ranking:
    """Constrain and rank ``cands``; the winner gets its :class:`Separation` from the runner-up.

    ``goal`` is resolved (:meth:`Objective.resolved`); ``alpha`` defaults to its own.

    Raises
    ------
    RecommendError
        A bad ``alpha``, or no candidate within the limits.
    """
    alpha = goal.alpha if alpha is None else alpha
    check_alpha(alpha)
    weights = goal.weights or {}
    readable, note = keep_readable(cands, goal.readers)
    kept = ranked(constrain(readable, goal.limits))
    if len(kept) > 1:
        kept[0].separation = compare(kept[0], kept[1], weights, alpha)
    return Ranking(goal, cands, kept, alpha, note)


def repeat_scores(
    values: Mapping[str, np.ndarray], weights: Mapping[str, float], ok: np.ndarray
) -> np.ndarray | None:
    """Each point's combined score in each repeat, ``(points, repeats)``, as :func:`scores`.

    ``values`` maps a metric to its repeats ``(points, repeats)``; a repeat missing
    any metric scores NaN.  ``None`` when the metrics differ in their repeats.
    """
    if len({v.shape for v in values.values()}) != 1:
        return None
    total = sum(weights.values())
    best = {m: float(np.nanmax(nanmedian(values[m])[ok])) for m in weights}
    logs = sum(w * np.log(np.maximum(values[m], 1e-300) / best[m]) for m, w in weights.items())
    return np.exp(logs / total)


def figures(
    values: Mapping[str, np.ndarray], weights: Mapping[str, float], ok: np.ndarray
) -> dict[int, dict[str, Any]]:
    """The :class:`Candidate` figures that the repeats give, by point, for the points measured.

    Parameters
    ----------
    values
        Each metric's repeats, ``(points, repeats)``.
    weights
        The objective's weights.
    ok
        The points that succeeded; those without a positive median of every metric
        are left out too.

    Returns
    -------
    dict
        Point index to ``median``, ``low``, ``high``, ``score``, ``score_low``,
        ``score_high``, ``repeats`` and ``repeat_scores``.
    """
    spreads = {m: spread(v) for m, v in values.items()}
    ok = ok.copy()
    for med, _lo, _hi in spreads.values():
        ok &= np.isfinite(med) & (med > 0)
    if not ok.any():
        return {}
    score = scores(spreads, weights, ok)
    per_repeat = repeat_scores(values, weights, ok)
    return {
        int(i): {
            "median": {m: float(s[0][i]) for m, s in spreads.items()},
            "low": {m: float(s[1][i]) for m, s in spreads.items()},
            "high": {m: float(s[2][i]) for m, s in spreads.items()},
            "score": float(score[0][i]),
            "score_low": float(score[1][i]),
            "score_high": float(score[2][i]),
            "repeats": {m: v[i].tolist() for m, v in values.items()},
            "repeat_scores": [] if per_repeat is None else per_repeat[i].tolist(),
        }
        for i in np.flatnonzero(ok)
    }


def compare(
    winner: Candidate,
    runner: Candidate,
    weights: Mapping[str, float],
    alpha: float = ALPHA,
    *,
    why: str = "",
) -> Separation:
    """Whether ``winner`` beats ``runner`` beyond noise, by a rank test over their repeats.

    One metric: its repeats (its unit).  Several: the per-repeat combined scores, or,
    where the candidates have none, the repeats of the metric with the largest weight.
    ``why``: how the winner was picked, said if the runner-up has the better median
    (default: by the objective's score, when that is not the quantity tested).
    """
    quantity = (
        "score"
        if len(weights) > 1 and winner.repeat_scores
        else max(weights, key=weights.__getitem__)
    )
    if quantity == "score":
        x, y, unit = winner.repeat_scores, runner.repeat_scores, "1"
    else:
        x, y = winner.repeats.get(quantity, []), runner.repeats.get(quantity, [])
        unit = winner.unit(quantity)
    overlap = {
        m: winner.ci[m][0] <= runner.ci[m][1] and runner.ci[m][0] <= winner.ci[m][1]
        for m in weights
        if m in winner.ci and m in runner.ci
    }
    if not why:  # a score of medians can rank apart from the medians of what is tested
        shown = ", ".join(f"{m}={w:g}" for m, w in weights.items())
        why = f"by its score on the objective ({shown}: weighted geometric mean of the medians)"
    return separate(
        x,
        y,
        why=why,
        runner_up=runner.label,
        quantity=quantity,
        unit=unit,
        alpha=alpha,
        intervals_overlap=overlap,
    )


def intervals(flat: Any, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """A metric's confidence interval of the median at every point, NaN without one."""
    import xarray as xr

    var, pattern = split_metric(metric)
    npts = flat.sizes["point"]
    missing = xr.DataArray(np.full(npts, np.nan), dims="point")
    bounds = []
    for end in ("low", "high"):
        da = flat.get(f"{var}_ci_{end}", missing)
        da = da.sel(pattern=pattern) if pattern and "pattern" in da.dims else da
        bounds.append(spread(da.transpose("point", ...).values.reshape(npts, -1)))
    return bounds[0][1], bounds[1][2]
