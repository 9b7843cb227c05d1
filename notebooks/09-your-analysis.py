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
# # Your data, your analysis
#
# The layout that is best for reading whole maps is the worst for reading time series,
# and the reverse; what counts is the reads *you* make. This notebook tunes a file for
# two of them:
#
# - an analysis written in Python: a monthly climatology over a box, computed with
#   xarray (and dask) by a function in a module of your own;
# - a training loop that draws random maps in batches, with loader worker processes, as
#   a PyTorch `DataLoader` does.
#
# It sweeps stored chunk shapes in netCDF-4 and Zarr, uncompressed and compressed (a
# compressed file can read as fast and be much smaller, so the pick is not the largest file
# for nothing), the dask chunks the analysis opens the file with, and the loader's workers,
# and measures beside them the layouts you get
# without tuning: the format library's default, dask's `auto` chunks and Rew's balanced
# chunks. Then it answers "how much faster than what I get anyway?" per read.
#
# **Your own file:** `-p path my.nc -p variable tas` (anything xarray opens); adapt `box`
# below, or the module the notebook writes, to your coordinates.
# **As a batch job:** `iotune notebook notebooks/09-your-analysis.ipynb -o results/mine`
# (`-p NAME VALUE` sets any parameter of the next cell; values are YAML literals).

# %% tags=["parameters"]
path = ""  # your netCDF/HDF5/Zarr file; "" writes a small CF-like tas(time, lat, lon)
variable = "tas"  # the variable tuned for
shape = {"time": 365, "lat": 45, "lon": 90}  # the file written when path is "" (float32, 5.6 MiB)
box = {"lat": [20, 40], "lon": [0, 40]}  # the climatology's box, in your coordinates' units
chunks = [[365, 15, 30], [5, 45, 90]]  # stored chunk shapes swept (add [30, 45, 90])
backends = ["netcdf4", "zarr"]  # the formats swept
codecs = ["none", "zlib"]  # stored uncompressed and compressed (zlib level 1: fast)
dask_chunks = ["storage"]  # how xarray opens the file for your function (add "auto")
workers = [0, 2]  # the loader's worker processes (0: in the training process)
batch = 16  # samples (maps) per batch
step = "10ms"  # an accelerator's compute per batch: how busy does each loader keep it?
repeats = 2  # measurements per configuration; the speedups' intervals need 2 or more
out = "../results/nb-09-your-analysis"  # the data, your module, the spec and results.nc

# %% [markdown]
# ## Your data
#
# With no `path`, the notebook writes a year of daily near-surface temperature on a
# 4-degree grid, CF-style: `tas(time, lat, lon)` in K with `time`, `lat` and `lon`
# coordinates, a seasonal cycle of opposite sign in each hemisphere, and noise.

# %%
import time
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

started = time.monotonic()
folder = Path(out).resolve()
folder.mkdir(parents=True, exist_ok=True)
if path:
    data_path = Path(path).resolve()
else:
    data_path = folder / "tas.nc"
    days = pd.date_range("2001-01-01", periods=shape["time"], freq="D")
    lat = np.linspace(-88, 88, shape["lat"])
    lon = np.linspace(0, 360, shape["lon"], endpoint=False)
    season = np.cos(2 * np.pi * (np.arange(len(days)) - 200) / 365.25)[:, None, None]
    rng = np.random.default_rng(0)
    tas = (
        288.0
        - 30 * np.abs(np.sin(np.deg2rad(lat)))[None, :, None]
        + 10 * season * np.sign(lat)[None, :, None]
        + rng.normal(0, 1.5, (len(days), len(lat), len(lon)))
    )
    xr.Dataset(
        {variable: (("time", "lat", "lon"), tas.astype("float32"), {"units": "K"})},
        coords={
            "time": days,
            "lat": ("lat", lat, {"units": "degrees_north"}),
            "lon": ("lon", lon, {"units": "degrees_east"}),
        },
        attrs={"Conventions": "CF-1.8"},
    ).to_netcdf(data_path)
source = xr.open_dataset(data_path)
source

# %% [markdown]
# ## Your analysis, as a module beside the spec
#
# iotune calls your function once per repeat on every layout it writes, with the trial's
# file opened the way you open it (`xr.open_dataset(engine="netcdf4")` or
# `xr.open_zarr`, with the trial's dask chunks), and times the open, the call, computing
# what it returns and the close, from a cold cache. Every layout must give the same
# answer: the function first runs on the values in memory, and a trial whose answer
# differs fails with the difference.
#
# The function is given each trial as your file looks in xarray: your variable under its
# own name, the file's coordinates, its attributes, and its CF encoding decoded (times as
# dates, packed integers unpacked, fill values masked), although the trial's file stores
# the variable alone. So it selects its box by latitude and longitude and groups by
# calendar month, as code written for your file does, and runs unchanged on it.

# %%
import runpy

from iotune.core.units import format_number

module = f'''"""My analysis: the mean annual cycle of {variable} over a box."""

BOX = {{dim: slice(*bounds) for dim, bounds in {box!r}.items()}}


def monthly_mean(ds):
    """The box's mean for each month of the year: what I compute from this file."""
    region = ds[{variable!r}].sel(BOX)
    return region.groupby("time.month").mean(...)
'''
(folder / "myanalysis.py").write_text(module)
print(module)

# your function on your file, in this kernel: the answer every layout must reproduce
monthly_mean = runpy.run_path(str(folder / "myanalysis.py"))["monthly_mean"]
answer = monthly_mean(source).to_series()
source.close()  # the sweep reads the file in its own processes
# four significant digits whatever the units: 1.234e-05 kg m-2 s-1 is not shown as 0.0
answer.map(lambda v: format_number(v, significant=4)).to_frame(variable)

# %% [markdown]
# ## The sweep
#
# One spec: the file as the workload (`field: file`), the stored chunk shapes, codecs and formats,
# `dask_chunks` (`storage`: one dask chunk per stored chunk; the `dask-auto` baseline is
# dask's guess, and `"auto"` in the list sweeps it at every layout), the
# loader's `num_workers`, three read patterns (your function, the training `batches` of
# random maps, each followed by a `step` of compute, and the time series at a few points
# for contrast) and three `baselines`.

# %%
import yaml

import iotune

climatology = {"name": "climatology", "call": "myanalysis:monthly_mean"}
spec = {
    "version": 1,
    "name": "your-analysis",
    "workload": {"field": "file", "path": str(data_path), "variable": variable},
    "backend": backends,
    "parameters": {
        "chunks": chunks,
        "codec": codecs,
        "level": 1,
        "dask_chunks": dask_chunks,
        "num_workers": workers,
        "prefetch_factor": 2,
    },
    "read": {
        "patterns": [climatology, "batches", "timeseries"],
        "batches": {"sample": {"time": 1}, "batch": batch, "batches": 6, "step": step},
        "timeseries": {"pixels": 2},
    },
    "measure": {"repeats": repeats, "noise_probes": 0},
    "baselines": ["library", "dask-auto", "balanced"],
}
spec_path = folder / "spec.yaml"  # beside myanalysis.py: the spec's folder is on the import path
spec_path.write_text(yaml.safe_dump(spec, sort_keys=False, default_flow_style=None))
sweep = iotune.load_spec(spec_path)
print(spec_path.read_text())
print(f"{len(iotune.make_plan(sweep).trials)} trials, {sweep.workload.nbytes / 2**20:.1f} MiB each")

# %%
from iotune.app.api import recommendation_text, results_text

ds = iotune.run(sweep, out=folder, overwrite=True, progress=False)
print(f"written and swept in {time.monotonic() - started:.0f} s\n")
print(results_text(ds))

# %% [markdown]
# Every configuration's median throughput per read (`read:climatology`, your function, is
# ranked by how long a call takes; the MiB/s of the bytes it made the process read is
# shown beside, as a compressed layout reads fewer), each read's best, and its speedup
# over the baselines.
#
# ## What to use for the climatology
#
# The winner, whether it beats the runner-up beyond noise, its speedup over each
# baseline, and the settings to paste, including the `open_dataset(..., chunks=...)` line
# it was measured with.

# %%
print(recommendation_text(iotune.recommend(ds, objective="read:climatology")))

# %% [markdown]
# ## What to use for training
#
# For the batches, the report adds the samples per second, the time to the first batch,
# a map-style `Dataset` class and the `DataLoader(...)` arguments of the best point
# (PyTorch itself is not needed to measure them).

# %%
print(recommendation_text(iotune.recommend(ds, objective="read:batches")))

# %% [markdown]
# ## Is the accelerator kept busy?
#
# With `step`, the training loop computes that long on each batch before it asks for
# the next; the accelerator's utilisation is the share of the loop spent computing
# rather than waiting for data, after the first batch (MLPerf Storage counts a run only
# at 90 % or more, the dashed line). More loader workers keep it busier until the step,
# not the file, is what limits; `recommend` above names the cheapest configuration
# that reaches 90 %.

# %%
from IPython.display import Image, display

from iotune.plot.busy import utilisation

figure = folder / "utilisation.png"
utilisation(ds).savefig(figure, dpi=110)
display(Image(filename=str(figure)))
busy = ds["read_utilisation"].sel(pattern="batches").median("repeat").to_series()
busy.unstack("num_workers").map(lambda v: f"{v:.0%}")  # utilisation per layout and workers

# %% [markdown]
# ## How much faster than what you get anyway
#
# Each read's best configuration over each baseline, in the best's format: the bar is
# the ratio of median throughputs, the whisker a bootstrap interval over the repeats. A
# bar below 1 is a baseline that reads that pattern faster than every layout swept; the
# best layout for one read is rarely the best for another, so tune for the read you make
# most.

# %%
from iotune.plot.baselines import vs_baselines

figure = folder / "vs-baselines.png"  # what `iotune plot` draws as vs-baselines.png
vs_baselines(ds).savefig(figure, dpi=110)
display(Image(filename=str(figure)))

# %% [markdown]
# The same numbers as a table (what `recommend --format json` calls `vs_baselines`):

# %%
from iotune.results import speedup

table = pd.DataFrame(speedup.vs_baselines(ds, speedup.each_best(ds)))
columns = ["speedup", "low", "high", "size_ratio"]  # ratios: 1.23x, never rounded to 0
table[columns] = table[columns].map(speedup.times)
table.set_index(["pattern", "baseline"])

# %% [markdown]
# ## Apply it to your file, and measure again
#
# `iotune apply` rewrites your file with the layout recommended for your climatology, out
# of core, region by region, and verifies it. `dry_run=True` first says what it would
# cost, creating nothing: the size from the compression ratio the sweep measured on
# your file, the time from the sweep's write rate and a short cold read of your file,
# and the peak memory. Then the conversion, after which the sweep's reads are timed on
# your file (before) and the new one (after), each from a cold cache, as often as the
# sweep repeated (three times at least): your function (in a process of its own, with
# your variable also as `data`, and both answers compared) and the time series (the
# `batches` loader is not timed after). The speedups and their intervals are kept beside
# the new file as `NAME.iotune-apply.json`.

# %%
from iotune.convert.after import record_path
from iotune.plot.apply import before_after

picked = iotune.recommend(ds, objective="read:climatology").winner.settings["backend"]
converted = folder / f"{data_path.stem}-climatology{'.zarr' if picked == 'zarr' else '.nc'}"
options = {"objective": "read:climatology", "overwrite": True, "progress": False}
print(iotune.apply(ds, data_path, converted, dry_run=True, **options).text(), "\n")
applied = iotune.apply(ds, data_path, converted, **options)
print(applied.text())

figure = folder / "before-after.png"
before_after(applied.after).savefig(figure, dpi=110)
display(Image(filename=str(figure)))
print(f"kept in {record_path(converted).name}")
