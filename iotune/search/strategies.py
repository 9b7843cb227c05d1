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

from iotune.core.errors import UsageError
from iotune.core.extras import require
from iotune.core.logs import quiet
from iotune.model.spec import STRATEGIES, WITHOUT_TORCH
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


#: how much a point of earlier results (``search.prior``) counts next to a new measurement
PRIOR_WEIGHT = 0.5


class PriorWeights:
    """TPE's observation weights with the prior's points counting :data:`PRIOR_WEIGHT`.

    TPE weighs the observations of each of its two groups in trial order; the
    prior's points are added first, so the oldest share of a group, the prior's
    share of the study's trials now, is (about) the prior's.  optuna's own ramp
    for long histories is kept.
    """

    def __init__(self) -> None:
        self.prior = 0
        self.study: Any = None

    def __call__(self, n: int) -> Any:
        from optuna.samplers._tpe.sampler import default_weights

        weights = default_weights(n)
        total = len(self.study.get_trials(deepcopy=False)) if self.study is not None else 0
        old = round(n * min(1.0, self.prior / max(1, total)))
        weights[:old] = weights[:old] * PRIOR_WEIGHT
        return weights


def make_sampler(
    strategy: str, *, seed: int, budget: int, space: Space, weights: PriorWeights | None = None
) -> Any:
    """The optuna sampler for ``strategy`` (not ``grid``, which walks the grid in order).

    Raises
    ------
    UsageError
        ``gp`` without PyTorch, or an unknown strategy.
    """
    import optuna

    if strategy == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    # optuna 4.9 deprecated ``weights`` (removal planned for 6.0): only a prior uses it
    extra: dict[str, Any] = {"weights": weights} if weights is not None else {}
    if strategy == "tpe":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return optuna.samplers.TPESampler(seed=seed, **extra)
    if strategy == "auto":
        with warnings.catch_warnings():  # group is "experimental" in optuna 5
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            warnings.simplefilter("ignore", FutureWarning)
            return optuna.samplers.TPESampler(
                seed=seed,
                multivariate=True,
                group=True,
                n_startup_trials=startup_trials("auto", budget),
                constant_liar=True,
                **extra,
            )
    if strategy == "gp":
        try:
            import torch  # type: ignore[import-not-found,unused-ignore]  # noqa: F401 - only to say what is missing
        except ImportError as err:
            raise UsageError(
                "search.strategy: 'gp' needs PyTorch (pip install torch); "
                f"allowed without it: {', '.join(WITHOUT_TORCH)}"
            ) from err
        return optuna.samplers.GPSampler(seed=seed)
    allowed = ", ".join(STRATEGIES)
    raise UsageError(f"search.strategy: unknown {strategy!r}; allowed: {allowed}")


def startup_trials(strategy: str, budget: int) -> int:
    """Random trials before the sampler models what it has seen."""
    if strategy == "auto":
        return min(20, max(5, budget // 5))
    return 0 if strategy in ("grid", "random") else 10


class Proposer:
    """Proposes points to measure and hears how they did: an optuna study, ask and tell.

    ``grid`` has no study: it proposes the grid's points in order.
    """

    #: asks per proposal before giving up on the sampler (all duplicates or not applicable)
    MAX_ASKS = 20

    def __init__(self, strategy: str, *, seed: int, budget: int, space: Space) -> None:
        require("optuna", extra="search", feature="iotune tune (adaptive search)")
        self.space = space
        self.strategy = strategy
        self.seed, self.budget = seed, budget
        self.startup = startup_trials(strategy, budget)
        self.dists = distributions(space)
        self.weights = PriorWeights()
        self.study: Any = None
        self.reseed([], [])
        self._grid = space.iterate() if strategy == "grid" else None

    def reseed(
        self, told: list[tuple[dict[str, Any], float]], prior: list[tuple[dict[str, Any], float]]
    ) -> None:
        """A new study that knows ``prior`` (weighted down) and then ``told``.

        Between batches only: trials asked and not yet told are forgotten.
        """
        import optuna

        if self.strategy == "grid":
            return
        self.weights.prior = len(prior)
        sampler = make_sampler(
            self.strategy,
            seed=self.seed,
            budget=self.budget,
            space=self.space,
            weights=self.weights if prior else None,
        )
        with quiet("optuna"):  # "A new study created", "Trial 3 finished ..."
            self.study = optuna.create_study(direction="maximize", sampler=sampler)
        self.weights.study = self.study
        for coords, value in [*prior, *told]:
            self.add(coords, value)

    def ask(
        self, skip: set[str], *, at: float | None = None, fixed: dict[str, Any] | None = None
    ) -> tuple[Any, Any] | None:
        """An applicable point whose trial is not in ``skip``: (Resolved, optuna trial).

        ``at`` is the fidelity to measure it at (None: no rungs); ``fixed`` holds
        parameters to keep at these values (the rest are sampled).  None when the
        sampler keeps proposing points already measured (or, for ``grid``, when
        the grid is done); the caller then draws one itself.
        """
        from optuna.trial import TrialState

        rung = {} if at is None else {"fidelity": at}
        if self._grid is not None:
            for coords in self._grid:
                found = self.space.resolve({**coords, **rung})
                if not isinstance(found, str) and found.trial.id not in skip:
                    return found, None
            return None
        assert self.study is not None  # every strategy but grid has a study
        with quiet("optuna"):
            for _ in range(self.MAX_ASKS):
                if fixed:
                    dims = [d for d in self.space.dims if d.name in fixed]
                    self.study.enqueue_trial({d.name: d.choice_of(fixed[d.name]) for d in dims})
                trial = self.study.ask(self.dists)
                coords = {d.name: d.label_of(trial.params[d.name]) for d in self.space.dims}
                found = self.space.resolve({**coords, **rung})
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
