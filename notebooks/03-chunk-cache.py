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
# # The chunk cache
#
# A time-series read (every time step at a few pixels) through chunks that are large in
# space touches the same few chunks once per pixel. When the library's chunk cache holds
# those chunks, each is read and decompressed once; when it is smaller than one chunk,
# every pixel pays for them again. This notebook sweeps the cache size for the netCDF4 and
# HDF5 (h5py) libraries on the `nci-serial` workload with zlib-compressed chunks a quarter
# of the time axis long and the whole tile wide.
#
# **As a batch job:** `iotune notebook notebooks/03-chunk-cache.ipynb -p size full -o results/cache`
# runs this notebook with papermill; the executed notebook and `results.nc` land together in
# `results/cache`. Any parameter of the next cell can be set with `-p NAME VALUE` (YAML
# literals), e.g. `-p overrides '{parameters.codec: [zlib, none]}'`.

# %% tags=["parameters"]
spec = "../sweeps/nci-serial.yaml"
size = "small"  # "small": 240 x 240 tile, under a minute; "full": the spec's 600 x 600
overrides = {}  # dotted spec keys -> values, e.g. {"parameters.chunk_cache": ["1MiB", "64MiB"]}
out = "../results/nb-03-chunk-cache"  # results.nc goes here
executor = "serial"  # "serial" or "dask"

# %%
import iotune
from iotune.app.notebook import small_requested

if size == "full" and small_requested():
    print("IOTUNE_SMALL is set (as on Binder): keeping the demo size")
    size = "small"

written = iotune.load_spec(spec).workload
shape = dict(zip(written.dims, written.shape, strict=True))
if size == "small":
    shape = {"time": 24, "y": 240, "x": 240}
t, y, x = shape.values()
chunk = [max(1, t // 4), y, x]  # large in space: a pixel's time series touches 4 chunks
STUDY = {
    "backend": ["netcdf4", "h5py"],
    "parameters.chunks": chunk,
    "parameters.codec": "zlib",
    "parameters.level": 1,
    "parameters.shuffle": "byte",
    "parameters.chunk_cache": ["256KiB", "1MiB", "4MiB", "16MiB", "64MiB"],
    "read.patterns": ["timeseries"],
}
changes = {"workload.shape": shape, **STUDY, **overrides, "execution.executor": executor}
sweep = iotune.load_spec(spec, overrides=changes)
chunk_mib = sweep.workload.itemsize * chunk[0] * y * x / 2**20
print(f"chunks {chunk}: {chunk_mib:.2f} MiB each raw; a time series touches {t // chunk[0]}")

# %%
ds = iotune.run(sweep, out=out, overwrite=True)
ds

# %% [markdown]
# Time-series read throughput against the cache size, one line per library:

# %%
# %matplotlib inline
from iotune import plot

plot.throughput(ds, metric="read", pattern="timeseries", x="chunk_cache", hue="backend")

# %%
read = ds["read_MiBps"].sel(pattern="timeseries", drop=True).median("repeat")
speedup = read / read.isel(chunk_cache=0)
speedup.name = "speed-up over the smallest cache"
speedup.to_dataframe().unstack("backend")

# %% [markdown]
# Once the cache holds every chunk a pixel's series touches, more cache buys nothing; below
# one chunk, every pixel re-reads and re-inflates them. netCDF-C's default cache (and
# HDF5's 1 MiB) is easily too small for chunks this wide.
