"""When the measurements cannot tell configurations apart: a stable pick, and "keep yours".

Two runs of the same sweep rank the leaders in whatever order noise gives them.  The
configurations the repeats cannot tell from the leader (the fastest by its median)
are a tie: the interval of their ratio holds 1 (:mod:`iotune.results.gaps`; the run's
noise floor joins them only below its fewest repeats).  Among a tie the pick is the
smallest stored size, then the fewest settings changed from the baseline, so the
advice is the same every time, but only among those whose estimate is at most
``max_tie_loss`` (default 5 %) slower than the leader, and the note says what was
given up, with its interval.  When the leader cannot be told from a configuration
further behind than that, the answer is that this noise cannot decide (the leader
is named, and about how many repeats would decide).  When the baseline itself is
in the tie, the answer is to keep it.

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
from iotune.model.objective import MAX_TIE_LOSS, Objective
from iotune.results.gaps import MIN_REPEATS, Gap, between, quantity
from iotune.results.labels import plain
from iotune.results.objective import Candidate, Ranking, compare
from iotune.results.speedup import interval_text, ratio_interval
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


def gaps(
    ranked: Sequence[Candidate], weights: Mapping[str, float], noise: float | None = None
) -> list[tuple[Candidate, Gap]]:
    """Every candidate after the leader with its :class:`Gap` behind it, in rank order."""
    leader = ranked[0]
    return [(c, between(leader, c, weights, noise)) for c in ranked[1:]]


def changed(cand: Candidate, defaults: Mapping[str, Any]) -> int:
    """How many of the baseline's settings ``cand`` changes."""
    return sum(1 for dim, value in defaults.items() if cand.coords.get(dim, value) != value)


@dataclass(frozen=True)
class Pick:
    """The configuration to name, its runner-up, their separation and the leader's tie."""

    winner: Candidate
    runner_up: Candidate | None
    #: the winner against the runner-up (``None``: no runner-up)
    separation: Separation | None
    #: how many configurations cannot be told apart from the leader (1: no tie)
    tied: int = 1
    #: the winner behind the leader (None: the winner is the leader)
    gap: Gap | None = None
    #: the winner's stored size against the leader's (1: the leader)
    size: float = 1.0
    #: the tied configurations more than ``max_tie_loss`` behind (noise cannot decide)
    undecided: tuple[Gap, ...] = ()
    max_tie_loss: float = MAX_TIE_LOSS
    #: the fewest repeats in the tie, and the run's floor, when the floor joined some of it
    floor: float | None = None
    #: the leader's label, for the "cannot decide" answer
    leader: str = ""

    @property
    def note(self) -> str:
        """How a tie among the leaders was broken; empty without one, or when this noise
        cannot decide it (:attr:`undecided_text` says so)."""
        if self.tied < 2 or self.undecided:
            return ""
        why = "the 95% bootstrap interval of their ratio holds 1"
        if self.floor is not None:
            why += f"; or, below {MIN_REPEATS} repeats, they differ by less than the run's "
            why += f"noise floor, {self.floor:.0%}: more repeats would decide"
        head = (
            f"{self.tied} configurations cannot be told apart ({why}); picked the smallest "
            f"stored size within {self.max_tie_loss:.0%} of the fastest, then the fewest "
            "settings changed from the baseline"
        )
        if self.gap is None:
            return f"{head}: the fastest itself"
        return f"{head}: the {1 - self.size:.0%} smaller file, {self.gap.text()}"

    @property
    def undecided_text(self) -> str:
        """The "cannot decide at this noise" answer; empty when the tie is decided."""
        if not self.undecided:
            return ""
        near = min(self.undecided, key=lambda g: g.loss)
        need = max(g.repeats_to_decide() for g in self.undecided)
        count = len(self.undecided)
        noise = f"{near.repeats} repeats"
        if near.noise is not None:
            noise += f", the run's noise floor {near.noise:.0%}"
        return (
            f"cannot decide at this noise: the fastest measured, {self.leader}, cannot be "
            f"told apart from {count} configuration{'s' if count > 1 else ''} more than "
            f"{self.max_tie_loss:.0%} slower (the nearest {near.text()}; {noise}); about {need} "
            "repeats would decide (iotune run --resume with more measure.repeats, or "
            "measure.repeats: auto); named here: the fastest measured"
        )


def stable_pick(
    ranking: Ranking,
    defaults: Mapping[str, Any],
    noise: float | None = None,
) -> Pick:
    """The pick of a ranking among the leader's tie, with its runner-up and separation.

    ``noise``: the run's noise floor on the objective (:func:`objective_noise`), used
    only for points with too few repeats.  The loss a tie-break may take is the
    objective's ``max_tie_loss``.
    """
    kept, loss = ranking.ranked, ranking.objective.max_tie_loss
    weights = ranking.objective.weights or {}
    leader = kept[0]
    group = [(c, g) for c, g in gaps(kept, weights, noise) if g.tied]
    far = tuple(g for _c, g in group if g.loss > loss + 1e-12)
    order = {id(c): i for i, c in enumerate(kept)}
    winner, gap = leader, None
    if not far:  # the tie is decided: the smallest file within the loss
        within = [(leader, None), *group]
        winner, gap = min(
            within,
            key=lambda cg: (cg[0].file_bytes, changed(cg[0], defaults), order[id(cg[0])]),
        )
    runner = next((c for c in kept if c is not winner), None)
    if winner is leader or runner is None:
        sep = ranking.separation
    else:  # the leader gave way: test the pick against its own runner-up (the leader)
        smaller = 1 - winner.file_bytes / leader.file_bytes
        why = f"for its {smaller:.0%} smaller stored file, within {loss:.0%} of the fastest (tied)"
        sep = compare(winner, runner, weights, ranking.alpha, why=why)
    floor = noise if any(g.within_floor and not g.in_interval for _c, g in group) else None
    return Pick(
        winner,
        runner,
        sep,
        tied=1 + len(group),
        gap=gap,
        size=winner.file_bytes / leader.file_bytes if leader.file_bytes else 1.0,
        undecided=far,
        max_tie_loss=loss,
        floor=floor,
        leader=leader.label,
    )


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
    #: what the speedup is over, by name: ``your settings``, ``source``, ``library``
    name: str = "your settings"

    def text(self, winner: str, objective: str) -> str:
        if self.baseline.endswith(f": {winner}") or self.baseline == winner:
            return (
                f"keep your settings ({self.baseline}): they are the best measured on {objective}"
            )
        return (
            f"keep your settings ({self.baseline}): the pick ({winner}) is not "
            f"better beyond noise on {objective} ({self.speedup:.3g}x "
            f"{interval_text(self.low, self.high)} over {self.name})"
        )


def keep(
    winner: Candidate,
    baseline: Candidate | None,
    weights: Mapping[str, float],
    *,
    noise: float | None = None,
) -> Keep | None:
    """A :class:`Keep` when ``baseline`` is ``winner`` or tied with it, else None.

    Tied: the repeats cannot tell them apart (:func:`iotune.results.gaps.between`; the
    run's noise floor ``noise`` counts only below their fewest repeats).
    """
    if baseline is None:
        return None
    if baseline.coords == winner.coords:  # your settings are the best measured: keep them
        return Keep(baseline.label, 1.0, 1.0, 1.0)
    x, y = quantity(winner, baseline, weights)
    speedup, low, high = ratio_interval(x, y)
    if not between(baseline, winner, weights, noise).tied:
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
    speedup is within ``noise`` (give the run's floor only where the repeats are too few
    for an interval, :data:`iotune.results.gaps.MIN_REPEATS`).  Only for an objective
    of one read pattern.
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
    return Keep(shown, speedup, low, high, name)
