"""The samplers of each strategy: ``auto``'s TPE judges against the best quarter."""

from __future__ import annotations

from iotune.search.space import Space
from iotune.search.strategies import make_sampler, quarter
from iotune.tuning import grid_sweep


def test_the_good_group_is_a_quarter() -> None:
    assert [quarter(n) for n in (1, 4, 5, 20, 26, 200)] == [1, 1, 2, 5, 7, 25]


def test_auto_is_a_multivariate_tpe_with_a_quarter(small_grid) -> None:
    space = Space(grid_sweep(small_grid, {}, "grid"))
    sampler = make_sampler("auto", seed=0, budget=30, space=space)
    assert sampler._gamma is quarter and sampler._multivariate and sampler._group
    assert sampler._n_startup_trials == 6
    plain = make_sampler("tpe", seed=0, budget=30, space=space)
    assert plain._gamma is not quarter  # plain tpe keeps optuna's defaults
