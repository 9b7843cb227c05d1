"""A search's convergence, and which knobs matter.

- :func:`convergence`: each trial's own score against the trial number
  (explored and re-measured marked apart), the best single trial so far, and —
  when the recorded grid is given — the grid's median of the configuration the
  search would recommend after each trial, with the grid's best as a line: the
  gap between the two "best" curves is what a lucky trial costs.
- :func:`importance`: the parameters' importance shares as bars.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from iotune.core.errors import ResultsError
from iotune.plot._common import _rate_ticks
from iotune.results import accessor  # noqa: F401 - registers ds.iotune

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _weights(ds: xr.Dataset) -> dict[str, float]:
    try:
        return dict(json.loads(str(ds.attrs.get("search_weights") or "{}")))
    except ValueError:
        return {}


def _unit(ds: xr.Dataset, weights: dict[str, float]) -> str:
    """The score's unit: calls/s for the user's own code (:mod:`iotune.results.percall`)."""
    from iotune.results import percall

    found = sorted({percall.unit(ds, m) for m in weights}) or ["MiB/s"]
    return " and ".join(found)


def grid_values(grid: xr.Dataset, weights: dict[str, float]) -> dict[str, float]:
    """Each grid point's weighted geometric mean of its metric medians, by trial id."""
    ranking = grid.iotune.rank(weights=weights)
    total = sum(weights.values())
    found = {}
    for cand in ranking.candidates:
        logs = sum(w * math.log(cand.median[m]) for m, w in weights.items())
        tid = str(grid["trial_id"].sel(cand.coords).values)
        found[tid] = math.exp(logs / total)
    return found


def convergence(ds: xr.Dataset, grid: xr.Dataset | None = None) -> Figure:
    """Best so far against trials for a search's results (``iotune tune``).

    Parameters
    ----------
    ds
        A search's results (``search_*`` variables along ``trial``).
    grid
        The recorded grid the search replayed, or one measured over the same space:
        adds the true value of the pick after each trial and the grid's best.
    """
    from matplotlib.figure import Figure

    if "search_score" not in ds:
        raise ResultsError("not a search's results: no search_score (run iotune tune)")
    scores = ds["search_score"].values
    trials = np.arange(1, scores.size + 1)
    kinds = ds["search_kind"].values.astype(str)
    fig = Figure(figsize=(7.5, 4.2), layout="constrained")
    ax = fig.subplots()
    for kind, marker in (("explore", "o"), ("remeasure", "s")):
        sel = kinds == kind
        ax.scatter(
            trials[sel], scores[sel], marker=marker, s=18, alpha=0.6, label=f"trial ({kind})"
        )
    best = np.fmax.accumulate(np.where(np.isfinite(scores), scores, -np.inf))
    ax.step(
        trials, np.where(np.isfinite(best), best, np.nan), where="post", label="best trial so far"
    )
    if grid is not None:
        _grid_lines(ax, ds, grid, trials)
    weights = _weights(ds)
    what = next(iter(weights)) if len(weights) == 1 else "weighted objective"
    ax.set_xlabel("trial")
    ax.set_ylabel(f"{what} ({_unit(ds, weights)})")
    _rate_ticks(ax.yaxis)
    ax.set_title(
        f"{ds.attrs.get('name', 'search')}: {ds.attrs.get('search_strategy', '')} search, "
        f"seed {ds.attrs.get('search_seed', '')}",
        wrap=True,  # a long sweep name: wrapped at the figure's edges, not cut off
    )
    ax.legend(fontsize="small", loc="lower right")
    return fig


def _grid_lines(ax, ds: xr.Dataset, grid: xr.Dataset, trials: np.ndarray) -> None:
    values = grid_values(grid, _weights(ds))
    ids = ds["trial_id"].values.astype(str)
    leaders = ds["search_leader"].values
    truth = [values.get(ids[i], np.nan) if i >= 0 else np.nan for i in leaders]
    ax.step(trials, truth, where="post", label="pick so far: its grid median")
    top = max(values.values(), default=np.nan)
    ax.axhline(top, color="gray", linestyle="--", label="grid's best")


def importance(ds: xr.Dataset, objective: str | None = None) -> Figure:
    """Bars of each parameter's share of importance (:mod:`iotune.analysis.importance`)."""
    from matplotlib.figure import Figure

    from iotune.analysis.importance import importance as shares_of

    weights = _weights(ds)
    if objective is None and weights:
        objective = ",".join(f"{m}={w:g}" for m, w in weights.items())
    found = shares_of(ds, objective)
    fig = Figure(figsize=(6.5, 1.2 + 0.45 * max(1, len(found.shares))), layout="constrained")
    ax = fig.subplots()
    names = list(found.shares)[::-1]
    ax.barh(names, [100 * found.shares[n] for n in names])
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of importance (%)")
    title = f"what matters for {found.objective} ({found.points} points)"
    ax.set_title(title, fontsize="medium", wrap=True)
    if not names:
        ax.text(0.5, 0.5, found.note, transform=ax.transAxes, ha="center", color="gray")
    fig.text(0.01, 0.01, "PED-ANOVA (optuna)", fontsize="x-small", color="gray")
    return fig
