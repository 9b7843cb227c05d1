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
# # Chunking and compression: the NCI serial study
#
# NCI's I/O tuning talk measured Landsat-like int16 tiles (full time × 4000 × 4000) in
# netCDF4 with four chunk shapes — [T,500,500], [5,500,500], [5,200,200], [1,200,200] —
# deflate levels 1/4/9, bzip2 and blosc-lz4 with and without shuffle, under a *spatial*
# read (13 days × a 400 km window) and a *time-series* read (every time step at one pixel).
# `sweeps/nci-serial.yaml` is that study scaled to a small machine; its findings on one
# are in `docs/findings-nci.md`.
#
# The `small` default shrinks the tile to 240 × 240 × 24 steps (chunk sides scaled alike)
# and levels to 1 and 9, so it runs in about a minute. It runs as two sweeps that are then
# merged with `iotune.merge`: zlib/bzip2/none with and without shuffle, and blosc-lz4
# with byte shuffle only — blosc-lz4 *without* shuffle fails on small incompressible chunks
# in netCDF-C's blosc filter (finding 6) and prints a line per chunk.
#
# **As a batch job:** `iotune notebook notebooks/02-chunking-and-compression.ipynb -p size full -o results/nci`
# runs this notebook with papermill; the executed notebook and `results.nc` land together in
# `results/nci`. Any parameter of the next cell can be set with `-p NAME VALUE` (YAML
# literals), e.g. `-p overrides '{parameters.codec: [zlib, none]}'`.

# %% tags=["parameters"]
spec = "../sweeps/nci-serial.yaml"
size = "small"  # "small": 240 x 240 tile, about a minute; "full": the spec (about 10 min)
overrides = {}  # dotted spec keys -> values, applied to both sweeps
out = "../results/nb-02-chunking"  # results.nc (both sweeps merged) goes here
executor = "serial"  # "serial" or "dask"

# %%
from pathlib import Path

import iotune
from iotune.app.notebook import small_requested

if size == "full" and small_requested():
    print("IOTUNE_SMALL is set (as on Binder): keeping the demo size")
    size = "small"

DEMO = {
    "workload.shape": {"time": 24, "y": 240, "x": 240},
    "parameters.chunks": [[24, 30, 30], [5, 30, 30], [5, 12, 12], [1, 12, 12]],
    "parameters.level": [1, 9],
    "read.spatial": {"time": 7, "y": 1.0, "x": 1.0},
    "measure.repeats": 2,
}
common = {**(DEMO if size == "small" else {}), **overrides, "execution.executor": executor}
deflate = iotune.load_spec(
    spec, overrides={"parameters.codec": ["none", "zlib", "bzip2"], **common}
)
blosc = iotune.load_spec(
    spec, overrides={"parameters.codec": "blosc-lz4", "parameters.shuffle": "byte", **common}
)
for sweep in (deflate, blosc):
    print(f"{sweep.name}: {len(iotune.make_plan(sweep).trials)} trials")

# %%
parts = [
    iotune.run(deflate, out=Path(out) / "deflate", overwrite=True),
    iotune.run(blosc, out=Path(out) / "blosc", overwrite=True),
]
ds = iotune.merge(parts)
Path(out).mkdir(parents=True, exist_ok=True)
ds.to_netcdf(Path(out) / "results.nc")
ds

# %% [markdown]
# **Finding 1 and 2 — level and shuffle.** A low deflate level gets almost all of the size
# gain; byte shuffle raises the ratio *and* the speed.

# %%
from iotune.results import summary

ok = ds.where(ds["status"] == "ok")
table = ok[["ratio"]].assign(write_MiBps=ok["write_MiBps"].median("repeat"))
table.sel(chunks=ds["chunks"].values[0]).to_dataframe()[["ratio", "write_MiBps"]].dropna()

# %% [markdown]
# **Findings 3 and 4 — the codecs.** Stored size against write throughput: bzip2 is the
# smallest and slowest, blosc-lz4 with shuffle the fast compressor on the frontier.

# %%
from IPython.display import Image, display

from iotune.app import api

figures = {p.stem: p for p in api.save_plots(ds, out)}
display(Image(filename=str(figures["size-vs-write"])))

# %% [markdown]
# **Finding 5 — the chunk shape must follow the access pattern.** Chunks spanning the whole
# time axis make the spatial read fetch every step; small chunks favour the time series.

# %%
display(Image(filename=str(figures["read-spatial"])))
display(Image(filename=str(figures["read-timeseries"])))
print(summary.format_best(ds))

# %% [markdown]
# **A file-level knob changes the answer: lossy quantisation.** netCDF-C can round away
# mantissa bits before deflate (`quantize: bitround:N` keeps N bits). On a smooth float
# field that makes the file much smaller — and iotune stores the error it cost. Asked for
# the smallest file, `recommend` keeps to lossless settings until it is told what error is
# acceptable (`max_error`, in the data's units, or `min_digits`); then the answer changes.

# %%
lossy = iotune.load_spec(
    spec,
    overrides={
        **common,
        "workload.dtype": "float32",
        "parameters.chunks": [[5, 30, 30]] if size == "small" else [[5, 500, 500]],
        "parameters.codec": "zlib",
        "parameters.level": 1,
        "parameters.shuffle": "byte",
        "parameters.quantize": ["off", "bitround:8"],
    },
)
q = iotune.run(lossy, out=Path(out) / "quantize", overwrite=True)
print(q[["ratio", "max_abs_error", "digits_kept"]].to_dataframe())
smallest = api.recommend(q, objective="write", max_ratio_loss=0.0)
within = api.recommend(q, objective="write", max_ratio_loss=0.0, max_error=1.0)
print("smallest lossless:        ", smallest.winner.label)
print("smallest within 1.0 error:", within.winner.label)
