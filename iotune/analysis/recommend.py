"""The best configuration of a sweep under an objective, and how sure that is.

Reads only the results Dataset.  An objective is one metric (``write``,
``read:<pattern>``) or weights over several; a configuration's score is the
weighted geometric mean of its median throughputs, each relative to the best
median of that metric, so metrics in different ranges count by their weights
alone.  Constraints (``max_size``, ``max_ratio_loss``) remove candidates first.
The winner is compared with the runner-up over the spread of the repeats and
with the sweep's baseline (contiguous, no compression, library defaults).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.analysis import exports
from iotune.analysis.points import (
    empty_hint_sets,
    hints_of,
    label,
    plain,
    settings_of,
    swept,
    target_of,
)
from iotune.errors import UsageError
from iotune.units import format_size, parse_size

if TYPE_CHECKING:
    import xarray as xr

#: preferred baseline values per parameter, first match wins
BASELINE = {
    "chunks": ("contiguous", "auto"),
    "codec": ("none",),
    "shuffle": ("none",),
    "shards": ("none",),
    "hints": ("default",),
}


class RecommendError(UsageError):
    """An objective, weight or constraint that the results cannot answer."""


@dataclass
class Candidate:
    """One successful grid point and its figures under the objective."""

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


@dataclass
class Recommendation:
    """What :func:`recommend` found; ``to_dict`` is its JSON form."""

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

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(asdict(self))


def recommend(
    results: str | Path | xr.Dataset,
    *,
    objective: str | None = None,
    weights: str | Mapping[str, float] | None = None,
    max_size: int | str | None = None,
    max_ratio_loss: float | str | None = None,
    variable: str | None = None,
) -> Recommendation:
    """Pick the best configuration of a sweep, its runner-up and exports to paste.

    Parameters
    ----------
    results
        A results file, its directory or an opened results Dataset.
    objective
        One metric: ``"write"`` or ``"read:<pattern>"``.  Default: ``weights``,
        else ``read:timeseries``/the first read pattern/``write``.
    weights
        Several metrics, ``"write=1,read:timeseries=3"`` or a mapping.
    max_size
        Largest stored size allowed (bytes or ``"64MiB"``).
    max_ratio_loss
        Fraction from 0 to 1: candidates must compress to at least
        ``(1 - max_ratio_loss)`` times the best compression ratio in the sweep.
    variable
        Variable name in the exports; default the workload's own (user data)
        or ``data``.

    Returns
    -------
    Recommendation

    Raises
    ------
    RecommendError
        An unknown metric, a bad weight or constraint, or no configuration left.
    """
    from iotune.results.dataset import open_results

    ds = open_results(results) if isinstance(results, str | Path) else results
    chosen = _weights(ds, objective, weights)
    limits = _limits(max_size, max_ratio_loss)
    everything = _candidates(ds, chosen)
    if not everything:
        raise RecommendError("the results hold no successful trial with every objective metric")
    kept = _constrain(everything, limits)
    kept.sort(key=lambda c: (-c.score, c.file_bytes))
    winner, runner = kept[0], kept[1] if len(kept) > 1 else None
    baseline, note = _baseline(ds, everything, winner)
    repeats = int(ds.sizes.get("repeat", 1))
    separated, separation = _separation(winner, runner, chosen, repeats)
    speedup = {}
    if baseline is not None:
        speedup = {m: winner.median[m] / baseline.median[m] for m in chosen}
        speedup["score"] = winner.score / baseline.score
    return Recommendation(
        weights=chosen,
        winner=winner,
        runner_up=runner,
        baseline=baseline,
        baseline_note=note,
        separated=separated,
        separation=separation,
        speedup=speedup,
        constraints=limits,
        candidates=len(kept),
        repeats=repeats,
        exports=exports.all_exports(
            winner.settings, target_of(ds, variable), hints=hints_of(ds, winner.settings)
        ),
    )


def metrics_of(ds: xr.Dataset) -> list[str]:
    """The metrics an objective may name in ``ds``."""
    found = ["write"] if "write_MiBps" in ds else []
    if "read_MiBps" in ds and "pattern" in ds.dims:
        found += [f"read:{p}" for p in ds["pattern"].values]
    return found


def _weights(
    ds: xr.Dataset, objective: str | None, weights: str | Mapping[str, float] | None
) -> dict[str, float]:
    allowed = metrics_of(ds)
    if objective is not None and weights is not None:
        raise RecommendError("--objective and --weights: give one, not both")
    if isinstance(weights, str):
        weights = _parse_weights(weights)
    if weights is None:
        if objective is None:
            defaults = [m for m in ("read:timeseries", *allowed) if m in allowed]
            objective = defaults[0] if defaults else "write"
        weights = {objective: 1.0}
        where = "--objective"
    else:
        where = "--weights"
    for metric, weight in weights.items():
        if metric not in allowed:
            raise RecommendError(
                f"{where}: {metric!r} is not a metric of these results; "
                f"allowed: {', '.join(allowed)}"
            )
        if not (isinstance(weight, int | float) and math.isfinite(weight) and weight > 0):
            raise RecommendError(f"{where}: weight {weight!r} of {metric}; allowed: a number > 0")
    return {m: float(w) for m, w in weights.items()}


def _parse_weights(text: str) -> dict[str, float]:
    out = {}
    for part in text.split(","):
        metric, sep, value = part.strip().partition("=")
        try:
            weight = float(value) if sep else float("nan")
        except ValueError:
            weight = float("nan")
        if not metric or not math.isfinite(weight):
            raise RecommendError(
                f"--weights: {part.strip()!r}; allowed: METRIC=NUMBER pairs separated by "
                "commas, like write=1,read:timeseries=3"
            )
        out[metric] = weight
    return out


def _limits(max_size: int | str | None, max_ratio_loss: float | str | None) -> dict[str, Any]:
    limits: dict[str, Any] = {}
    if max_size is not None:
        try:
            limits["max_size"] = parse_size(max_size)
        except ValueError as err:
            raise RecommendError(f"--max-size: {err}") from err
    if max_ratio_loss is not None:
        loss = max_ratio_loss
        if isinstance(loss, str):
            try:
                loss = float(loss)
            except ValueError:
                loss = float("nan")
        if not (isinstance(loss, int | float) and 0 <= loss <= 1):
            raise RecommendError(
                f"--max-ratio-loss: {max_ratio_loss!r}; allowed: a fraction from 0 to 1 "
                "(0.1 accepts a compression ratio 10% below the best)"
            )
        limits["max_ratio_loss"] = float(loss)
    return limits


def _spread(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median, min and max over the last axis, ignoring NaN; all-NaN rows give NaN."""
    ordered = np.sort(values, axis=-1)  # NaN sorts last
    n = np.isfinite(values).sum(axis=-1, keepdims=True)

    def at(k: np.ndarray) -> np.ndarray:
        return np.take_along_axis(ordered, np.maximum(k, 0), axis=-1)[..., 0]

    empty = n[..., 0] == 0
    med = (at((n - 1) // 2) + at(n // 2)) / 2
    return (
        np.where(empty, np.nan, med),
        np.where(empty, np.nan, ordered[..., 0]),
        np.where(empty, np.nan, at(n - 1)),
    )


def _candidates(ds: xr.Dataset, weights: Mapping[str, float]) -> list[Candidate]:
    dims = swept(ds)
    extra = [d for d in ds.dims if d not in (*dims, "pattern", "repeat", "metric")]
    ds = ds.isel({d: 0 for d in extra if ds.sizes[d] == 1})  # fixed parameters kept as dims
    flat = ds.stack(point=dims) if dims else ds.expand_dims(point=[0])
    npts = flat.sizes["point"]
    stats = {}
    for metric in weights:
        var = flat["write_MiBps"] if metric == "write" else flat["read_MiBps"]
        if metric != "write":
            var = var.sel(pattern=metric.split(":", 1)[1], drop=True)
        values = var.transpose("point", ...).values.reshape(npts, -1)
        stats[metric] = _spread(values)
    ok = np.ones(npts, dtype=bool)
    if "status" in flat:
        ok &= flat["status"].values.astype(str) == "ok"
    for med, _lo, _hi in stats.values():
        ok &= np.isfinite(med) & (med > 0)
    if not ok.any():
        return []
    total = sum(weights.values())

    def score(which: int, i: int) -> float:
        best = {m: float(np.nanmax(s[0][ok])) for m, s in stats.items()}
        logs = sum(
            w * math.log(max(stats[m][which][i], 1e-300) / best[m]) for m, w in weights.items()
        )
        return math.exp(logs / total)

    return [_candidate(ds, flat, dims, i, stats, score) for i in np.flatnonzero(ok)]


def _candidate(ds, flat, dims, i, stats, score) -> Candidate:
    one = flat.isel(point=int(i))
    coords = {d: plain(one[d].values) for d in dims}
    return Candidate(
        coords=coords,
        label=label(coords),
        settings=settings_of(ds, one, coords),
        median={m: float(s[0][i]) for m, s in stats.items()},
        low={m: float(s[1][i]) for m, s in stats.items()},
        high={m: float(s[2][i]) for m, s in stats.items()},
        score=score(0, i),
        score_low=score(1, i),
        score_high=score(2, i),
        file_bytes=float(one["file_bytes"]) if "file_bytes" in one else float("nan"),
        ratio=float(one["ratio"]) if "ratio" in one else float("nan"),
    )


def _constrain(cands: list[Candidate], limits: Mapping[str, Any]) -> list[Candidate]:
    kept = list(cands)
    if "max_size" in limits:
        kept = [c for c in kept if c.file_bytes <= limits["max_size"]]
        if not kept:
            smallest = min(c.file_bytes for c in cands)
            raise RecommendError(
                f"--max-size: no successful configuration is at most "
                f"{format_size(limits['max_size'])}; the smallest stored size is "
                f"{format_size(smallest)}"
            )
    if "max_ratio_loss" in limits:
        best = max(c.ratio for c in cands)
        floor = (1 - limits["max_ratio_loss"]) * best
        kept = [c for c in kept if c.ratio >= floor - 1e-12]
        if not kept:
            raise RecommendError(
                f"--max-ratio-loss: no configuration within the size limit compresses to at "
                f"least {floor:.2f} (best ratio {best:.2f}); allow a larger loss or size"
            )
    return kept


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
            prefs = (*prefs, *empty_hint_sets(ds))
        found = next((p for p in prefs if p in values), None)
        if found is None:
            missing.append(f"no {'/'.join(prefs)} {dim} in the sweep")
        else:
            wanted[dim] = found
    if not wanted:
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


def _separation(
    winner: Candidate, runner: Candidate | None, weights: Mapping[str, float], repeats: int
) -> tuple[bool | None, str]:
    if runner is None:
        return None, "only one configuration met the constraints"
    if repeats < 2:
        return None, "cannot tell: one repeat per configuration, so no spread to compare"
    if len(weights) == 1:
        (m,) = weights
        lo, hi = winner.low[m], runner.high[m]
        unit = "MiB/s"
    else:
        lo, hi, unit = winner.score_low, runner.score_high, "(score)"
    if lo > hi:
        return True, (
            f"separated: the winner's slowest repeat ({_num(lo)} {unit}) beats the "
            f"runner-up's fastest ({_num(hi)} {unit}) over {repeats} repeats"
        )
    return False, (
        f"within noise: the winner's slowest repeat ({_num(lo)} {unit}) does not beat the "
        f"runner-up's fastest ({_num(hi)} {unit}) over {repeats} repeats; either is a sound "
        "choice, or rerun with more repeats"
    )


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return plain(value)


def _num(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:#.3g}".rstrip(".")
