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
# # From a Darshan log to a verdict
#
# Most HPC centres record every job's I/O with [Darshan](https://www.mcs.anl.gov/research/projects/darshan/).
# This notebook reads such a log with pydarshan, summarises what the application did
# (request sizes, shared file or file per process, collective or independent MPI-IO,
# HDF5 chunking, Lustre striping), lists what looks slow with the counters behind each
# finding, writes a sweep that reproduces the application's pattern with **its own settings
# as the baseline**, runs it at a small size and ends with the verdict: your current
# settings against the best measured ones.
#
# **From a terminal:** `iotune darshan LOG -o sweeps/mine.yaml --trial-size 1GiB`, then
# `iotune run sweeps/mine.yaml` and `iotune recommend results/NAME`.
# **As a batch job:** `iotune notebook notebooks/07-from-darshan.ipynb -p log /path/to/job.darshan`.

# %% tags=["parameters"]
log = "ior_hdf5_example.darshan"  # a Darshan log; a bare name is looked up in pydarshan's examples
trial_size = "4MiB"  # largest volume one trial moves (the application's own volume when smaller)
repeats = 2  # timed repeats per configuration
out = "../results/nb-07-from-darshan"  # the generated spec and results.nc go here

# %%
from pathlib import Path

import darshan
import matplotlib.pyplot as plt

import iotune
from iotune.app import api

path = Path(log)
if not path.exists():
    path = Path(darshan.__file__).parent / "examples" / "example_logs" / log
study = iotune.from_darshan(path, trial_size=trial_size)
print(study.text())

# %% [markdown]
# ## What the busiest file saw
#
# Darshan's request-size histogram (the application-level module: MPI-IO where the file
# was opened with MPI-IO, POSIX otherwise) and the bytes each rank moved. A file shared by
# all ranks is reduced by Darshan to one record, which keeps only its fastest and slowest
# rank.

# %%
main = study.main
fig, (sizes, ranks) = plt.subplots(1, 2, figsize=(11, 3.5))
for op, counts in main.sizes.items():
    sizes.bar([f"{b}" for b in counts], list(counts.values()), alpha=0.6, label=op.lower())
sizes.set_title(f"request sizes ({main.layer})")
sizes.set_ylabel("requests")
sizes.tick_params(axis="x", rotation=60)
sizes.legend()
ranks.bar(list(main.rank_bytes), [b / 2**20 for b in main.rank_bytes.values()])
ranks.set_title("bytes per rank")
ranks.set_ylabel("MiB")
ranks.tick_params(axis="x", rotation=60)
fig.tight_layout()

# %% [markdown]
# ## The generated sweep
#
# The application's settings are the spec's `baseline`, a point of the grid, so they are
# measured too; the parameters the findings name are swept around them.

# %%
outdir = Path(out)
spec_path = api.write_darshan_spec(study, outdir / "spec.yaml")
print(spec_path.read_text())

# %%
sweep = api.load_spec(spec_path, overrides={"measure.repeats": repeats})
ds = api.run(sweep, out=outdir, overwrite=True, progress=False)
print(api.counts_text(ds))

# %% [markdown]
# ## The verdict
#
# `recommend` compares the best configuration with *your current settings*, and prints
# the lines to paste.

# %%
rec = api.recommend(ds, objective="write")
print(api.recommendation_text(rec))
