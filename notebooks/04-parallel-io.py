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
# # Parallel I/O: MPI-IO hints, process count, layout and Lustre striping
#
# An application writing one checkpoint from many ranks has to choose collective or
# independent MPI-IO, collective buffering and data sieving on or off (ROMIO's
# `romio_cb_*` / `romio_ds_*` hints), one shared file or a file per process, and — on
# Lustre — the stripe count and size of the directory. Each trial here launches real ranks
# with `mpiexec` (the `mpich` wheel unless your mpi4py uses a system MPI; set
# `execution.launcher`, e.g. `srun -n {nprocs}`, on a cluster), times the slowest rank as
# IOR does, syncs with `MPI_File_sync`, reads back cold and checks every rank's data.
#
# The hints each trial really ran with (`MPI_File_get_info`) are stored beside the
# requested ones, so a hint the library ignored is visible.
#
# **As a batch job:** `iotune notebook notebooks/04-parallel-io.ipynb -p size full -o results/mpi`
# runs this notebook with papermill; the executed notebook and `results.nc` land together in
# `results/mpi`. Any parameter of the next cell can be set with `-p NAME VALUE` (YAML
# literals), e.g. `-p overrides '{parameters.codec: [zlib, none]}'`.

# %% tags=["parameters"]
spec = "../sweeps/mpi-hints.yaml"  # MPI-IO hints x transfer size x nprocs x layout
stripes_spec = "../sweeps/lustre-stripes.yaml"  # stripe count x size (applied on Lustre only)
size = "small"  # "small": 8 MiB, 1 or 2 ranks, under a minute; "full": the specs as written
overrides = {}  # dotted spec keys -> values, e.g. {"parameters.nprocs": [1, 2, 4]}
out = "../results/nb-04-parallel-io"  # results.nc of each sweep goes below here
executor = "serial"  # MPI trials launch their own ranks; "serial" keeps them uncontended

# %%
from pathlib import Path

import iotune
from iotune.app.notebook import small_requested

if size == "full" and small_requested():
    print("IOTUNE_SMALL is set (as on Binder): keeping the demo size")
    size = "small"

DEMO = {
    "workload.shape": {"time": 32, "y": 256, "x": 512},
    "parameters.hints": ["default", "cb_off"],
    "parameters.transfer_size": "1MiB",
    "parameters.io": ["collective", "independent"],
    "measure.repeats": 2,
}
changes = {**(DEMO if size == "small" else {}), **overrides, "execution.executor": executor}
sweep = iotune.load_spec(spec, overrides=changes)
print(
    f"{sweep.name}: {sweep.workload.nbytes / 2**20:.0f} MiB over all ranks, "
    f"{len(iotune.make_plan(sweep).trials)} trials; hint sets: {sweep.hints}"
)

# %%
ds = iotune.run(sweep, out=Path(out) / "hints", overwrite=True)
ds

# %% [markdown]
# Aggregate throughput (all bytes over the slowest rank's time), median of the repeats.
# On one node, collective buffering funnels everything through one aggregator: turning it
# off (`cb_off`) or writing independently is usually faster; file per process avoids the
# shared-file locking altogether.

# %%
ok = ds.where(ds["status"] == "ok")
table = ok["write_MiBps"].median("repeat").to_dataframe(name="write MiB/s")
table["read MiB/s"] = ok["read_MiBps"].sel(pattern="full").median("repeat").values.ravel()
table.dropna()

# %% [markdown]
# What the library really used: the effective hints of one trial, as JSON.

# %%
import json

effective = [e for e in ds["hints_effective"].values.ravel() if e]
print(json.dumps(json.loads(effective[0]), indent=1, sort_keys=True)[:1500])
print("ignored by the library:", [i for i in ds["hints_ignored"].values.ravel() if i][:3])

# %% [markdown]
# ## Lustre stripes
#
# On Lustre each trial gets a fresh directory striped with `lfs setstripe -c N -S SIZE`
# before the file exists, and the layout is read back with `lfs getstripe`. Elsewhere the
# settings are recorded as *not applied*, with the file system's type.

# %%
small = {"workload.shape": {"time": 16, "y": 256, "x": 512}, "measure.repeats": 1}
stripes = iotune.load_spec(
    stripes_spec,
    overrides={**(small if size == "small" else {}), "execution.executor": executor},
)
st = iotune.run(stripes, out=Path(out) / "stripes", overwrite=True)
print(st.attrs.get("stripe_settings", ""))
st["stripe_layout"].to_dataframe()

# %% [markdown]
# ## Parallel HDF5
#
# Where h5py is built against parallel HDF5, the `h5py` backend takes `nprocs > 1` too:
# the ranks write one file with the `mpio` driver, each its own block of steps, with the
# same hint sets and collective or independent I/O (compressed chunks: collective only).
# PyPI's h5py is serial; `make venv-phdf5` builds one on the system's MPICH.

# %%
from IPython.display import display

from iotune.backends import get_backend

parallel, why = get_backend("h5py").parallel_support()
print(why)
if parallel:
    small = {"workload.shape": {"time": 16, "y": 256, "x": 512}, "measure.repeats": 1}
    ph = iotune.load_spec(
        "../sweeps/parallel-hdf5.yaml",
        overrides={**(small if size == "small" else {}), "execution.executor": executor},
    )
    hd = iotune.run(ph, out=Path(out) / "hdf5", overwrite=True)
    display(hd["write_MiBps"].median("repeat").to_dataframe().dropna())
