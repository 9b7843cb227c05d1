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
# # iotune quickstart
#
# Run a small sweep — chunk shape × compression codec × chunk cache for a (time, y, x)
# int16 field in netCDF4 — on the file system of this machine, then look at the results
# Dataset, plot it and explore it.
#
# Every write includes close and `fsync`; every read starts from an emptied (and checked)
# page cache; every trial repeats.
#
# **As a batch job:** `iotune notebook notebooks/01-quickstart.ipynb -p size full -o results/qs`
# runs this notebook with papermill; the executed notebook and `results.nc` land together in
# `results/qs`. Any parameter of the next cell can be set with `-p NAME VALUE` (YAML
# literals), e.g. `-p overrides '{parameters.codec: [zlib, none]}'`.

# %% tags=["parameters"]
spec = "../sweeps/quick.yaml"  # the sweep (relative to this notebook's folder)
size = "small"  # "small": demo grid, about half a minute; "full": the spec as written
overrides = {}  # dotted spec keys -> values, e.g. {"parameters.codec": ["zlib", "none"]}
out = "../results/nb-01-quickstart"  # results.nc goes here
executor = "serial"  # "serial" or "dask" (a LocalCluster)

# %%
import iotune
from iotune.app.notebook import small_requested

if size == "full" and small_requested():
    print("IOTUNE_SMALL is set (as on Binder): keeping the demo size")
    size = "small"

# the demo grid: a quarter of the data, three chunk shapes, the fast codecs
DEMO = {
    "workload.shape": {"time": 32, "y": 128, "x": 128},
    "parameters.chunks": [[32, 16, 16], [4, 64, 64], [1, 128, 128]],
    "parameters.codec": ["none", "zlib", "blosc-lz4"],
    "read.spatial": {"time": 4, "y": 64, "x": 64},
}
changes = {**(DEMO if size == "small" else {}), **overrides, "execution.executor": executor}
sweep = iotune.load_spec(spec, overrides=changes)
plan = iotune.make_plan(sweep)
print(f"{sweep.name}: {sweep.workload.nbytes / 2**20:.1f} MiB, {len(plan.trials)} trials")

# %% [markdown]
# Run it. Finished trials are journalled in `out`; `overwrite=True` starts afresh.

# %%
ds = iotune.run(sweep, out=out, overwrite=True)
ds

# %% [markdown]
# What `iotune recommend` says first: the pick (or "keep your settings" when nothing beats
# them beyond noise), a tie and how it was broken, and the pick's cost on every metric and
# on stored size against the baseline, with intervals. Then the best configuration per
# metric (median of repeats), and the whole grid:

# %%
from iotune.app import api
from iotune.results import summary

print(api.best_text(ds))
print(summary.table(ds))

# %% [markdown]
# Time series read throughput: chunks long in time win, one map per chunk loses.

# %%
from IPython.display import Image, display

for path in api.save_plots(ds, out):
    if path.stem in ("write", "read-timeseries", "size-vs-write"):
        display(Image(filename=str(path)))

# %% [markdown]
# The same Dataset works with plain xarray, e.g. the median write speed per codec:

# %%
ds["write_MiBps"].median("repeat").to_dataframe().unstack("codec")

# %% [markdown]
# Turn the knobs:

# %%
iotune.explore(ds)
