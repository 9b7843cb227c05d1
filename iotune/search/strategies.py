"""optuna samplers for each ``search.strategy``, and the space as optuna distributions.

- ``grid``: every point once, in grid order (as ``iotune run``), no sampler;
- ``random``: independent uniform draws (``RandomSampler``);
- ``tpe``: optuna's ``TPESampler`` with its defaults (10 random start-up trials);
- ``gp``: optuna's ``GPSampler`` (needs PyTorch; the spec refuses ``gp`` without it);
- ``auto``: the documented choice, a multivariate TPE (``multivariate=True``,
  ``group=True``: it models parameters jointly, as chunk shape and codec interact)
  whose random start-up is a fifth of the budget (at least 5, at most 20), with the
  constant liar so parallel asks spread out.  It had the best (or a tied) median
  on the synthetic grids of ``docs/benchmarks.md``; variants tried there and
  dropped: 5 start-up trials, 64 EI candidates, independent TPE, exploring the
  leader's neighbours once the race is settled.  Tried again on the recorded
  grids of ``benchmarks/grids`` and the synthetic ones (``docs/benchmarks.md``,
  2026-11-24) and dropped, none better than this beyond seed-to-seed noise:
  a "good" group of the best quarter of the trials instead of TPE's tenth
  (``gamma``: no gain on the recorded grids, a loss on the synthetic ones, where
  it narrows the search too early), a covering design enqueued as the start-up
  (every value of every parameter once), a prior weight of 0.3-0.5 with 128-256
  EI candidates, and, in the loop, re-measuring in the order of an estimate
  shrunk toward a main-effects model and racing tied leaders to 4 measurements
  (fewer lucky picks, but fewer points visited), and one-parameter neighbours of
  the leader enqueued every 2nd or 3rd exploration trial (a gain on MPI-IO that
  other seeds did not repeat, a loss on synthetic grids).  On those first grids
  (recorded back to back on a loaded machine) what limited ``auto`` was points
  never visited.  The one change kept: ``search.remeasure`` defaults to 10 % of
  the budget, not 30 %: on the first grids and on the re-recorded ones (60
  seeds) it lowered no pair's share of good picks and raised several, the budget
  going to exploring; on the noisier synthetic grids it was neutral, a few
  points either way (``docs/benchmarks.md``).

Every strategy runs inside the same noise-aware loop (:mod:`iotune.search.loop`).
Numbers (levels, sizes, counts) are integer distributions over their sorted
ranks, so a sampler may use their order; everything else is categorical.
"""

from __future__ import annotations

import warnings
from typing import Any

from iotune.errors import UsageError
from iotune.extras import require
from iotune.logs import quiet
from iotune.search.space import Space


def distributions(space: Space) -> dict[str, Any]:
    """The optuna distribution of each searched dimension."""
    from optuna.distributions import CategoricalDistribution, IntDistribution

    found: dict[str, Any] = {}
    for dim in space.dims:
        choices = dim.choices()
        if dim.ordered and len(choices) > 1:
            found[dim.name] = IntDistribution(0, len(choices) - 1)
        else:
            found[dim.name] = CategoricalDistribution(list(choices))
    return found


def make_sampler(strategy: str, *, seed: int, budget: int, space: Space) -> Any:
    """The optuna sampler for ``strategy`` (not ``grid``, which walks the grid in order).

    Raises
    ------
    UsageError
        ``gp`` without PyTorch, or an unknown strategy.
    """
    import optuna

    if strategy == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if strategy == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if strategy == "auto":
        with warnings.catch_warnings():  # group is "experimental" in optuna 5
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.samplers.TPESampler(
                seed=seed,
                multivariate=True,
                group=True,
                n_startup_trials=min(20, max(5, budget // 5)),
                constant_liar=True,
            )
    if strategy == "gp":
        try:
            import torch  # type: ignore[import-not-found]  # noqa: F401 - only to say what is missing
        except ImportError as err:
            raise UsageError(
                "search.strategy: 'gp' needs PyTorch (pip install torch); "
                "allowed without it: grid, random, tpe, auto"
            ) from err
        return optuna.samplers.GPSampler(seed=seed)
    raise UsageError(f"search.strategy: unknown {strategy!r}; allowed: grid, random, tpe, gp, auto")


class Proposer:
    """Proposes points to measure and hears how they did: an optuna study, ask and tell.

    ``grid`` has no study: it proposes the grid's points in order.
    """

    #: asks per proposal before giving up on the sampler (all duplicates or not applicable)
    MAX_ASKS = 20

    def __init__(self, strategy: str, *, seed: int, budget: int, space: Space) -> None:
        require("optuna", extra="search", feature="iotune tune (adaptive search)")
        import optuna

        self.space = space
        self.strategy = strategy
        self.dists = distributions(space)
        self.study = None
        if strategy != "grid":
            sampler = make_sampler(strategy, seed=seed, budget=budget, space=space)
            with quiet("optuna"):  # "A new study created", "Trial 3 finished ..."
                self.study = optuna.create_study(direction="maximize", sampler=sampler)
        self._grid = space.iterate() if strategy == "grid" else None

    def ask(self, skip: set[str]) -> tuple[Any, Any] | None:
        """An applicable point whose trial is not in ``skip``: (Resolved, optuna trial).

        None when the sampler keeps proposing points already measured (or, for
        ``grid``, when the grid is done); the caller then draws one itself.
        """
        from optuna.trial import TrialState

        if self._grid is not None:
            for coords in self._grid:
                found = self.space.resolve(coords)
                if not isinstance(found, str) and found.trial.id not in skip:
                    return found, None
            return None
        assert self.study is not None  # every strategy but grid has a study
        with quiet("optuna"):
            for _ in range(self.MAX_ASKS):
                trial = self.study.ask(self.dists)
                coords = {d.name: d.label_of(trial.params[d.name]) for d in self.space.dims}
                found = self.space.resolve(coords)
                if isinstance(found, str) or found.trial.id in skip:
                    self.study.tell(trial, state=TrialState.FAIL)
                    continue
                return found, trial
        return None

    def tell(self, trial: Any, value: float, *, over_size: float = 0.0) -> None:
        """The score of a proposed point (NaN: failed); ``over_size`` > 0 is infeasible."""
        from optuna.trial import TrialState

        if trial is None:
            return
        assert self.study is not None  # a trial comes from the study
        trial.set_constraint("max_size", over_size)  # > 0: larger than allowed
        with quiet("optuna"):
            if value != value:  # NaN
                self.study.tell(trial, state=TrialState.FAIL)
            else:
                self.study.tell(trial, value)

    def add(self, coords: dict[str, Any], value: float, *, over_size: float = 0.0) -> None:
        """A point measured outside the sampler's asks (drawn, or from a resumed journal)."""
        import optuna

        if self.study is None or value != value:
            return
        params = {d.name: d.choice_of(coords[d.name]) for d in self.space.dims}
        made = optuna.trial.create_trial(
            params=params,
            distributions=self.dists,
            value=value,
            constraints={"max_size": over_size},
        )
        with quiet("optuna"):
            self.study.add_trial(made)
