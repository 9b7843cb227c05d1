# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Adaptive search: the best settings in a fraction of the trials
#
# A grid measures every combination; a search measures a *budget* of them, chosen by a
# sampler (optuna's TPE for `strategy: auto`) from what it measured so far. On a noisy
# machine the hard part is not finding a fast configuration but not being fooled by a
# lucky measurement, so the search keeps part of its budget to measure the leaders
# again, and recommends only a configuration whose repeats beat the others beyond noise.
#
# This notebook runs a small search for real (the `search:` settings below override the
# spec's), shows how it converged and which parameters mattered, and opens the explorer
# on the points it visited. With `grid` set to a recorded grid (`iotune run` results),
# it replays the search against that grid instead, in seconds, and the convergence plot
# shows the grid's true best.
#
# **From the command line:** `iotune tune sweeps/quick.yaml --budget 25% -o results/tune`,
# or offline `iotune tune --replay GRID.nc --objective read:timeseries --budget 25%`.

# %% tags=["parameters"]
spec = "../sweeps/quick.yaml"  # the space to search (relative to this notebook's folder)
grid = ""  # a recorded grid (results.nc) to replay instead of measuring; "" measures
objective = "read:timeseries"  # a metric, or weights like "write=1,read:spatial=2"
strategy = "auto"  # grid, random, tpe, gp (needs PyTorch) or auto
budget = 8  # trials (re-measurements included), or a share like "25%"
seed = 0
out = "../results/nb-06-search"  # results.nc, journal.jsonl and search.jsonl go here

# %%
from pathlib import Path

import iotune
from iotune import plot
from iotune.app.api import recommendation_text, search_text

SMALL = {  # a 24-point space of quick.yaml, trials of a fraction of a second
    "workload.shape": {"time": 16, "y": 64, "x": 64},
    "parameters.chunks": [[16, 16, 16], [4, 64, 64], [1, 64, 64]],
    "parameters.codec": ["none", "zlib", "blosc-lz4", "bzip2"],
    "read.spatial": {"time": 4, "y": 32, "x": 32},
}
settings = {"strategy": strategy, "budget": budget, "objective": objective, "seed": seed}
if grid:
    recorded = iotune.open_results(grid)
    ds = iotune.tune(replay=recorded, out=out, **settings)
else:
    recorded = None
    ds = iotune.tune(spec, out=out, overrides=SMALL, overwrite=True, progress=False, **settings)
print(search_text(ds))
print(f"results: {Path(out) / 'results.nc'}")

# %% [markdown]
# Each trial's own score, the best single trial so far, and (with a recorded grid) the
# grid's median of the configuration the search would recommend after each trial. Square
# markers are re-measurements of the leaders.

# %%
plot.convergence(ds, recorded)

# %% [markdown]
# Which knobs matter for the objective, from the points the search measured (PED-ANOVA
# importance, computed by optuna: how much each parameter decides whether a configuration
# is among the best tenth).

# %%
plot.importance(ds)

# %% [markdown]
# The recommendation, as `iotune recommend` gives it for any results: the search's pick,
# its runner-up, the test that says whether it wins beyond noise, and what to paste.

# %%
print(recommendation_text(iotune.recommend(ds, objective=objective)))

# %% [markdown]
# The explorer shows the visited points as the grid of the values the search tried
# (points it never measured are empty).

# %%
explorer = iotune.explore(ds, metric="read_MiBps")
explorer
