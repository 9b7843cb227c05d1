"""When the measurements cannot tell configurations apart: a stable pick, and "keep yours".

Two runs of the same sweep rank the leaders in whatever order noise gives them.  The
configurations whose repeats overlap the leader's (the slowest repeat of one is not
above the fastest of the other, on the objective's score) are a tie; among them the
pick is the smallest stored size, then the fewest settings changed from the baseline,
so the advice is the same every time.  When the baseline itself is in that tie, the
answer is to keep it.

The one rule for every command that names a configuration: ``recommend`` (and the
report) ranks the results and calls :func:`stable_pick`; a search (``iotune tune``)
calls :func:`pick_of` on the results it writes, so both name the same configuration
with the same note (:attr:`Pick.note`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import iotune.results.accessor  # noqa: F401  (registers ds.iotune)
from iotune.model.objective import Objective
from iotune.results.labels import plain
from iotune.results.objective import Candidate, Ranking, compare
from iotune.results.speedup import ratio_interval
from iotune.results.stats import Separation

if TYPE_CHECKING:
    import xarray as xr

#: how the pick among a tie is made, as the recommendation says it
TIE_BREAK = "the smallest stored size, then the fewest settings changed from the baseline"
#: preferred baseline values per parameter, first match wins
BASELINE = {
    "chunks": ("contiguous", "auto"),
    "codec": ("none",),
    "shuffle": ("none",),
    "shards": ("none",),
    "hints": ("default",),
}


def overlaps(a: Candidate, b: Candidate) -> bool:
    """Whether the repeats of ``a`` and ``b`` overlap on the objective's score."""
    return a.score_low <= b.score_high and b.score_low <= a.score_high


def within_noise(leader: Candidate, other: Candidate, noise: float | None) -> bool:
    """Whether ``leader`` leads ``other`` on the objective's score by no more than ``noise``
    (the run's noise floor, relative: the smallest difference it could see)."""
    if noise is None or not other.score > 0:
        return False
    return leader.score / other.score - 1 <= noise


def tied(ranked: Sequence[Candidate], noise: float | None = None) -> list[Candidate]:
    """The leader and every candidate whose repeats overlap the leader's, or that it leads
    by no more than the run's noise floor (``noise``), in rank order."""
    leader = ranked[0]
    return [
        c for c in ranked if c is leader or overlaps(leader, c) or within_noise(leader, c, noise)
    ]


def changed(cand: Candidate, defaults: Mapping[str, Any]) -> int:
    """How many of the baseline's settings ``cand`` changes."""
    return sum(1 for dim, value in defaults.items() if cand.coords.get(dim, value) != value)


def pick(
    ranked: Sequence[Candidate], defaults: Mapping[str, Any], noise: float | None = None
) -> Candidate:
    """The stable pick among the leader's tie (:data:`TIE_BREAK`); rank order last."""
    group = tied(ranked, noise)
    order = {id(c): i for i, c in enumerate(ranked)}
    return min(group, key=lambda c: (c.file_bytes, changed(c, defaults), order[id(c)]))


@dataclass(frozen=True)
class Pick:
    """The configuration to name, its runner-up, their separation and the size of the tie."""

    winner: Candidate
    runner_up: Candidate | None
    #: the winner against the runner-up (``None``: no runner-up)
    separation: Separation | None
    #: how many configurations cannot be told apart from the leader (1: no tie)
    tied: int = 1
    #: the noise floor that joined some of them to the tie (None: their repeats overlap)
    noise: float | None = None

    @property
    def note(self) -> str:
        """How a tie among the leaders was broken; empty when there was none."""
        if self.tied < 2:
            return ""
        why = (
            "their repeats overlap"
            if self.noise is None
            else f"they differ by less than the run's noise floor, {self.noise:.0%}"
        )
        return f"{self.tied} configurations cannot be told apart ({why}); picked {TIE_BREAK}"


def stable_pick(ranking: Ranking, defaults: Mapping[str, Any], noise: float | None = None) -> Pick:
    """The :func:`pick` of a ranking, with its runner-up and their separation.

    ``noise``: the run's noise floor on the objective (:func:`objective_noise`).
    """
    kept = ranking.ranked
    winner = pick(kept, defaults, noise)
    runner = next((c for c in kept if c is not winner), None)
    if winner is kept[0] or runner is None:
        sep = ranking.separation
    else:  # the leader by noise gave way: test the pick against its own runner-up
        sep = compare(winner, runner, ranking.objective.weights or {}, ranking.alpha)
    group = tied(kept, noise)
    by_noise = any(not overlaps(kept[0], c) for c in group[1:])
    return Pick(winner, runner, sep, len(group), noise if by_noise else None)


def objective_noise(ds: xr.Dataset, weights: Mapping[str, float]) -> float | None:
    """The run's noise floor on an objective: the largest of its metrics' floors, if any."""
    floors = [v for m, v in ds.iotune.noise.items() if m in weights]
    return max(floors) if floors else None


def pick_of(ds: xr.Dataset, objective: Objective) -> Pick:
    """The :class:`Pick` of the results ``ds`` under ``objective`` (as ``recommend`` makes it).

    Raises
    ------
    RecommendError
        A metric the results do not have, or no configuration left.
    """
    ranking = ds.iotune.rank_by(objective)
    noise = objective_noise(ds, ranking.objective.weights or {})
    return stable_pick(ranking, defaults_of(ds), noise)


def current_settings(ds: xr.Dataset) -> dict[str, Any]:
    """The application's own settings (the spec's ``baseline``), ``{}`` when it has none."""
    try:
        found = json.loads(str(ds.attrs.get("baseline") or "{}"))
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def empty_hint_sets(ds: xr.Dataset) -> list[str]:
    """Names of hint sets that set nothing (the MPI library's defaults)."""
    return [name for name, hints in ds.iotune.hint_sets.items() if not hints]


def defaults_of(ds: xr.Dataset) -> dict[str, Any]:
    """What "changed from the baseline" counts against: the application's own settings,
    else the sweep's default value (:data:`BASELINE`) of each parameter it swept."""
    current = current_settings(ds)
    if current:
        return current
    found = {}
    for dim, prefs in BASELINE.items():
        values = swept_values(ds, dim)
        if dim == "hints":
            prefs = (*prefs, *empty_hint_sets(ds))
        value = next((p for p in prefs if p in values), None)
        if value is not None:
            found[dim] = value
    return found


def swept_values(ds: xr.Dataset, dim: str) -> list[Any]:
    """Every value of a swept parameter: a grid's dimension, or a search's space (visited
    or not, from ``search_values``); empty when ``dim`` was not swept."""
    if dim in ds.dims:
        return [plain(v) for v in ds[dim].values]
    if dim not in ds.iotune.swept:
        return []
    try:
        space = json.loads(str(ds.attrs.get("search_values") or "{}"))
    except ValueError:
        space = {}
    if dim in space:
        return list(space[dim])
    return [plain(v) for v in ds[dim].values]


@dataclass(frozen=True)
class Keep:
    """The baseline holds its own: the winner is not better beyond noise.

    ``speedup``, ``low`` and ``high``: the winner over the baseline on the objective
    (median ratio and 95 % bootstrap interval of the repeats).
    """

    baseline: str
    speedup: float
    low: float
    high: float

    def text(self, winner: str, objective: str) -> str:
        if self.baseline.endswith(f": {winner}") or self.baseline == winner:
            return (
                f"keep your settings ({self.baseline}): they are the best measured on {objective}"
            )
        return (
            f"keep your settings ({self.baseline}): the best measured, {winner}, is not "
            f"better beyond noise on {objective} ({self.speedup:.3g}x "
            f"[{self.low:.3g}x to {self.high:.3g}x])"
        )


def keep(
    winner: Candidate,
    baseline: Candidate | None,
    weights: Mapping[str, float],
    *,
    noise: float | None = None,
) -> Keep | None:
    """A :class:`Keep` when ``baseline`` is ``winner`` or tied with it, else None.

    Tied: their repeats overlap (:func:`overlaps`), or the speedup is within the run's
    noise floor of the objective (``noise``, relative; measured by the noise probes).
    """
    if baseline is None:
        return None
    if baseline.coords == winner.coords:  # your settings are the best measured: keep them
        return Keep(baseline.label, 1.0, 1.0, 1.0)
    if len(weights) == 1:
        metric = next(iter(weights))
        x, y = winner.repeats.get(metric, []), baseline.repeats.get(metric, [])
    else:
        x, y = winner.repeat_scores, baseline.repeat_scores
    speedup, low, high = ratio_interval(x, y)
    within_noise = noise is not None and abs(speedup - 1.0) <= noise
    if not overlaps(winner, baseline) and not within_noise:
        return None
    return Keep(baseline.label, speedup, low, high)


#: the named baselines a user has anyway, in the order "your settings" means them
YOURS = ("source", "library")


def keep_named(
    rows: Sequence[Mapping[str, Any]],
    layouts: Mapping[str, str],
    weights: Mapping[str, float],
    *,
    noise: float | None = None,
) -> Keep | None:
    """A :class:`Keep` over the sweep's named baselines (``source``, else ``library``).

    ``rows`` are the winner's speedups over them (:func:`iotune.results.speedup.vs_baselines`);
    the baseline is kept when the interval of the objective's pattern holds 1, or the
    speedup is within the noise floor.  Only for an objective of one read pattern.
    """
    if len(weights) != 1 or not next(iter(weights)).startswith("read:"):
        return None
    pattern = next(iter(weights)).removeprefix("read:")
    found = {str(r["baseline"]): r for r in rows if r.get("pattern") == pattern}
    name = next((n for n in YOURS if n in found), None)
    if name is None:
        return None
    row = found[name]
    speedup, low, high = (float(row[k]) for k in ("speedup", "low", "high"))
    within_noise = noise is not None and abs(speedup - 1.0) <= noise
    if not (low <= 1.0 <= high) and not within_noise:
        return None
    shown = f"{name}: {layouts[name]}" if name in layouts else name
    return Keep(shown, speedup, low, high)
