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
# # Explore a results file
#
# Open any iotune results file and explore it: choose the metric, the parameter on the x
# axis, the hue and the facets, fix the other dimensions, and pick the statistic over the
# repeats. The figure and the table of the best configurations update in place.
#
# `make demo` writes `results/demo/results.nc`; without it, this notebook runs a small
# demo sweep first.

# %% tags=["parameters"]
results = "../results/demo/results.nc"  # a results file or the folder holding one
out = "../results/nb-05-explore"  # a demo sweep is written here when `results` is missing
metric = "write_MiBps"  # the metric shown first
top = 5  # rows in the table of best configurations

# %%
from pathlib import Path

import iotune
from iotune.results import summary

if Path(results).exists():
    ds = iotune.open_results(results)
else:
    print(f"{results} does not exist (`make demo` writes it); running a small demo sweep")
    demo = iotune.load_spec(
        "../sweeps/quick.yaml",
        overrides={
            "workload.shape": {"time": 16, "y": 64, "x": 64},
            "parameters.chunks": [[16, 16, 16], [1, 64, 64]],
            "parameters.codec": ["none", "zlib"],
            "read.spatial": {"time": 4, "y": 32, "x": 32},
        },
    )
    ds = iotune.run(demo, out=out, overwrite=True, progress=False)
print(f"sweep {ds.attrs['name']!r}: swept {ds.attrs['swept']}")
print(summary.format_best(ds))

# %%
explorer = iotune.explore(ds, metric=metric, top=top)
explorer

# %% [markdown]
# The controls are attributes, so the explorer can also be driven from code, e.g.
# `explorer.metric.value = "read_MiBps"`, `explorer.fixed["pattern"].value = "timeseries"`,
# and `explorer.best()` returns the table's rows.
