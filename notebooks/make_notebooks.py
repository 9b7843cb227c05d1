"""Write the notebooks in this folder from the cell sources below.

The ``.ipynb`` files are generated, so they stay stripped (no outputs, no
execution counts) and reviewable here as plain Python.  After editing this file:

    .venv/bin/python notebooks/make_notebooks.py

``tests/test_notebooks.py`` checks that the committed notebooks match it.
"""

# ruff: noqa: RUF001  (the markdown cells use the multiplication sign)
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SMALL_SWITCH = '''\
from iotune.notebook import small_requested

if size == "full" and small_requested():
    print("IOTUNE_SMALL is set (as on Binder): keeping the demo size")
    size = "small"'''

BATCH = """\
**As a batch job:** `iotune notebook notebooks/{name}.ipynb -p size full -o results/{stem}`
runs this notebook with papermill; the executed notebook and `results.nc` land together in
`results/{stem}`. Any parameter of the next cell can be set with `-p NAME VALUE` (YAML
literals), e.g. `-p overrides '{{parameters.codec: [zlib, none]}}'`."""

QUICKSTART = [
    new_markdown_cell(
        """\
# iotune quickstart

Run a small sweep — chunk shape × compression codec × chunk cache for a (time, y, x)
int16 field in netCDF4 — on the file system of this machine, then look at the results
Dataset, plot it and explore it.

Every write includes close and `fsync`; every read starts from an emptied (and checked)
page cache; every trial repeats.

"""
        + BATCH.format(name="01-quickstart", stem="qs")
    ),
    new_code_cell(
        """\
spec = "../sweeps/quick.yaml"  # the sweep (relative to this notebook's folder)
size = "small"  # "small": demo grid, about half a minute; "full": the spec as written
overrides = {}  # dotted spec keys -> values, e.g. {"parameters.codec": ["zlib", "none"]}
out = "../results/nb-01-quickstart"  # results.nc goes here
executor = "serial"  # "serial" or "dask" (a LocalCluster)""",
        metadata={"tags": ["parameters"]},
    ),
    new_code_cell(
        "import iotune\n"
        + SMALL_SWITCH
        + """

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
print(f"{sweep.name}: {sweep.workload.nbytes / 2**20:.1f} MiB, {len(plan.trials)} trials")"""
    ),
    new_markdown_cell(
        "Run it. Finished trials are journalled in `out`; `overwrite=True` starts afresh."
    ),
    new_code_cell("ds = iotune.run(sweep, out=out, overwrite=True)\nds"),
    new_markdown_cell("The best configuration per metric (median of repeats), and the whole grid:"),
    new_code_cell(
        """\
from iotune import summary

print(summary.format_best(ds))
print(summary.table(ds))"""
    ),
    new_markdown_cell(
        "Time series read throughput: chunks long in time win, one map per chunk loses."
    ),
    new_code_cell(
        """\
from IPython.display import Image, display

from iotune import api

for path in api.save_plots(ds, out):
    if path.stem in ("write", "read-timeseries", "size-vs-write"):
        display(Image(filename=str(path)))"""
    ),
    new_markdown_cell(
        "The same Dataset works with plain xarray, e.g. the median write speed per codec:"
    ),
    new_code_cell('ds["write_MiBps"].median("repeat").to_dataframe().unstack("codec")'),
    new_markdown_cell("Turn the knobs:"),
    new_code_cell("iotune.explore(ds)"),
]

CHUNKING = [
    new_markdown_cell(
        """\
# Chunking and compression: the NCI serial study

NCI's I/O tuning talk measured Landsat-like int16 tiles (full time × 4000 × 4000) in
netCDF4 with four chunk shapes — [T,500,500], [5,500,500], [5,200,200], [1,200,200] —
deflate levels 1/4/9, bzip2 and blosc-lz4 with and without shuffle, under a *spatial*
read (13 days × a 400 km window) and a *time-series* read (every time step at one pixel).
`sweeps/nci-serial.yaml` is that study scaled to a small machine; its findings on one
are in `docs/findings-nci.md`.

The `small` default shrinks the tile to 240 × 240 × 24 steps (chunk sides scaled alike)
and levels to 1 and 9, so it runs in about a minute. It runs as two sweeps that are then
merged with `iotune.merge`: zlib/bzip2/none with and without shuffle, and blosc-lz4
with byte shuffle only — blosc-lz4 *without* shuffle fails on small incompressible chunks
in netCDF-C's blosc filter (finding 6) and prints a line per chunk.

"""
        + BATCH.format(name="02-chunking-and-compression", stem="nci")
    ),
    new_code_cell(
        """\
spec = "../sweeps/nci-serial.yaml"
size = "small"  # "small": 240 x 240 tile, about a minute; "full": the spec (about 10 min)
overrides = {}  # dotted spec keys -> values, applied to both sweeps
out = "../results/nb-02-chunking"  # results.nc (both sweeps merged) goes here
executor = "serial"  # "serial" or "dask\"""",
        metadata={"tags": ["parameters"]},
    ),
    new_code_cell(
        "from pathlib import Path\n\nimport iotune\n"
        + SMALL_SWITCH
        + """

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
    print(f"{sweep.name}: {len(iotune.make_plan(sweep).trials)} trials")"""
    ),
    new_code_cell(
        """\
parts = [
    iotune.run(deflate, out=Path(out) / "deflate", overwrite=True),
    iotune.run(blosc, out=Path(out) / "blosc", overwrite=True),
]
ds = iotune.merge(parts)
Path(out).mkdir(parents=True, exist_ok=True)
ds.to_netcdf(Path(out) / "results.nc")
ds"""
    ),
    new_markdown_cell(
        """\
**Finding 1 and 2 — level and shuffle.** A low deflate level gets almost all of the size
gain; byte shuffle raises the ratio *and* the speed."""
    ),
    new_code_cell(
        """\
from iotune import summary

ok = ds.where(ds["status"] == "ok")
table = ok[["ratio"]].assign(write_MiBps=ok["write_MiBps"].median("repeat"))
table.sel(chunks=ds["chunks"].values[0]).to_dataframe()[["ratio", "write_MiBps"]].dropna()"""
    ),
    new_markdown_cell(
        """\
**Findings 3 and 4 — the codecs.** Stored size against write throughput: bzip2 is the
smallest and slowest, blosc-lz4 with shuffle the fast compressor on the frontier."""
    ),
    new_code_cell(
        """\
from IPython.display import Image, display

from iotune import api

figures = {p.stem: p for p in api.save_plots(ds, out)}
display(Image(filename=str(figures["size-vs-write"])))"""
    ),
    new_markdown_cell(
        """\
**Finding 5 — the chunk shape must follow the access pattern.** Chunks spanning the whole
time axis make the spatial read fetch every step; small chunks favour the time series."""
    ),
    new_code_cell(
        """\
display(Image(filename=str(figures["read-spatial"])))
display(Image(filename=str(figures["read-timeseries"])))
print(summary.format_best(ds))"""
    ),
]

CHUNK_CACHE = [
    new_markdown_cell(
        """\
# The chunk cache

A time-series read (every time step at a few pixels) through chunks that are large in
space touches the same few chunks once per pixel. When the library's chunk cache holds
those chunks, each is read and decompressed once; when it is smaller than one chunk,
every pixel pays for them again. This notebook sweeps the cache size for the netCDF4 and
HDF5 (h5py) libraries on the `nci-serial` workload with zlib-compressed chunks a quarter
of the time axis long and the whole tile wide.

"""
        + BATCH.format(name="03-chunk-cache", stem="cache")
    ),
    new_code_cell(
        """\
spec = "../sweeps/nci-serial.yaml"
size = "small"  # "small": 240 x 240 tile, under a minute; "full": the spec's 600 x 600
overrides = {}  # dotted spec keys -> values, e.g. {"parameters.chunk_cache": ["1MiB", "64MiB"]}
out = "../results/nb-03-chunk-cache"  # results.nc goes here
executor = "serial"  # "serial" or "dask\"""",
        metadata={"tags": ["parameters"]},
    ),
    new_code_cell(
        "import iotune\n"
        + SMALL_SWITCH
        + """

written = iotune.load_spec(spec).workload
shape = dict(zip(written.dims, written.shape))
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
print(f"chunks {chunk}: {chunk_mib:.2f} MiB each raw; a time series touches {t // chunk[0]}")"""
    ),
    new_code_cell("ds = iotune.run(sweep, out=out, overwrite=True)\nds"),
    new_markdown_cell("Time-series read throughput against the cache size, one line per library:"),
    new_code_cell(
        """\
%matplotlib inline
from iotune import plot

plot.throughput(ds, metric="read", pattern="timeseries", x="chunk_cache", hue="backend")"""
    ),
    new_code_cell(
        """\
read = ds["read_MiBps"].sel(pattern="timeseries", drop=True).median("repeat")
speedup = read / read.isel(chunk_cache=0)
speedup.name = "speed-up over the smallest cache"
speedup.to_dataframe().unstack("backend")"""
    ),
    new_markdown_cell(
        """\
Once the cache holds every chunk a pixel's series touches, more cache buys nothing; below
one chunk, every pixel re-reads and re-inflates them. netCDF-C's default cache (and
HDF5's 1 MiB) is easily too small for chunks this wide."""
    ),
]

EXPLORE = [
    new_markdown_cell(
        """\
# Explore a results file

Open any iotune results file and explore it: choose the metric, the parameter on the x
axis, the hue and the facets, fix the other dimensions, and pick the statistic over the
repeats. The figure and the table of the best configurations update in place.

`make demo` writes `results/demo/results.nc`; without it, this notebook runs a small
demo sweep first."""
    ),
    new_code_cell(
        """\
results = "../results/demo/results.nc"  # a results file or the folder holding one
out = "../results/nb-05-explore"  # a demo sweep is written here when `results` is missing
metric = "write_MiBps"  # the metric shown first
top = 5  # rows in the table of best configurations""",
        metadata={"tags": ["parameters"]},
    ),
    new_code_cell(
        """\
from pathlib import Path

import iotune
from iotune import summary

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
print(summary.format_best(ds))"""
    ),
    new_code_cell("explorer = iotune.explore(ds, metric=metric, top=top)\nexplorer"),
    new_markdown_cell(
        """\
The controls are attributes, so the explorer can also be driven from code, e.g.
`explorer.metric.value = "read_MiBps"`, `explorer.fixed["pattern"].value = "timeseries"`,
and `explorer.best()` returns the table's rows."""
    ),
]

PARALLEL = [
    new_markdown_cell(
        """\
# Parallel I/O: MPI-IO hints, process count, layout and Lustre striping

An application writing one checkpoint from many ranks has to choose collective or
independent MPI-IO, collective buffering and data sieving on or off (ROMIO's
`romio_cb_*` / `romio_ds_*` hints), one shared file or a file per process, and — on
Lustre — the stripe count and size of the directory. Each trial here launches real ranks
with `mpiexec` (the `mpich` wheel unless your mpi4py uses a system MPI; set
`execution.launcher`, e.g. `srun -n {nprocs}`, on a cluster), times the slowest rank as
IOR does, syncs with `MPI_File_sync`, reads back cold and checks every rank's data.

The hints each trial really ran with (`MPI_File_get_info`) are stored beside the
requested ones, so a hint the library ignored is visible.

"""
        + BATCH.format(name="04-parallel-io", stem="mpi")
    ),
    new_code_cell(
        """\
spec = "../sweeps/mpi-hints.yaml"  # MPI-IO hints x transfer size x nprocs x layout
stripes_spec = "../sweeps/lustre-stripes.yaml"  # stripe count x size (applied on Lustre only)
size = "small"  # "small": 8 MiB, 1 or 2 ranks, under a minute; "full": the specs as written
overrides = {}  # dotted spec keys -> values, e.g. {"parameters.nprocs": [1, 2, 4]}
out = "../results/nb-04-parallel-io"  # results.nc of each sweep goes below here
executor = "serial"  # MPI trials launch their own ranks; "serial" keeps them uncontended""",
        metadata={"tags": ["parameters"]},
    ),
    new_code_cell(
        "from pathlib import Path\n\nimport iotune\n"
        + SMALL_SWITCH
        + """

DEMO = {
    "workload.shape": {"time": 32, "y": 256, "x": 512},
    "parameters.hints": ["default", "cb_off"],
    "parameters.transfer_size": "1MiB",
    "parameters.io": ["collective", "independent"],
    "measure.repeats": 2,
}
changes = {**(DEMO if size == "small" else {}), **overrides, "execution.executor": executor}
sweep = iotune.load_spec(spec, overrides=changes)
print(f"{sweep.name}: {sweep.workload.nbytes / 2**20:.0f} MiB over all ranks, "
      f"{len(iotune.make_plan(sweep).trials)} trials; hint sets: {sweep.hints}")"""
    ),
    new_code_cell('ds = iotune.run(sweep, out=Path(out) / "hints", overwrite=True)\nds'),
    new_markdown_cell(
        """\
Aggregate throughput (all bytes over the slowest rank's time), median of the repeats.
On one node, collective buffering funnels everything through one aggregator: turning it
off (`cb_off`) or writing independently is usually faster; file per process avoids the
shared-file locking altogether."""
    ),
    new_code_cell(
        """\
ok = ds.where(ds["status"] == "ok")
table = ok["write_MiBps"].median("repeat").to_dataframe(name="write MiB/s")
table["read MiB/s"] = ok["read_MiBps"].sel(pattern="full").median("repeat").values.ravel()
table.dropna()"""
    ),
    new_markdown_cell(
        "What the library really used: the effective hints of one trial, as JSON."
    ),
    new_code_cell(
        """\
import json

effective = [e for e in ds["hints_effective"].values.ravel() if e]
print(json.dumps(json.loads(effective[0]), indent=1, sort_keys=True)[:1500])
print("ignored by the library:", [i for i in ds["hints_ignored"].values.ravel() if i][:3])"""
    ),
    new_markdown_cell(
        """\
## Lustre stripes

On Lustre each trial gets a fresh directory striped with `lfs setstripe -c N -S SIZE`
before the file exists, and the layout is read back with `lfs getstripe`. Elsewhere the
settings are recorded as *not applied*, with the file system's type."""
    ),
    new_code_cell(
        """\
small = {"workload.shape": {"time": 16, "y": 256, "x": 512}, "measure.repeats": 1}
stripes = iotune.load_spec(
    stripes_spec,
    overrides={**(small if size == "small" else {}), "execution.executor": executor},
)
st = iotune.run(stripes, out=Path(out) / "stripes", overwrite=True)
print(st.attrs.get("stripe_settings", ""))
st["stripe_layout"].to_dataframe()"""
    ),
    new_markdown_cell(
        """\
## Parallel HDF5

Where h5py is built against parallel HDF5, the `h5py` backend takes `nprocs > 1` too:
the ranks write one file with the `mpio` driver, each its own block of steps, with the
same hint sets and collective or independent I/O (compressed chunks: collective only).
PyPI's h5py is serial; `make venv-phdf5` builds one on the system's MPICH."""
    ),
    new_code_cell(
        """\
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
    display(hd["write_MiBps"].median("repeat").to_dataframe().dropna())"""
    ),
]

NOTEBOOKS = {
    "01-quickstart": QUICKSTART,
    "02-chunking-and-compression": CHUNKING,
    "03-chunk-cache": CHUNK_CACHE,
    "04-parallel-io": PARALLEL,
    "05-explore": EXPLORE,
}


def build(cells: list) -> nbformat.NotebookNode:
    """A stripped notebook with a Python 3 kernel and stable cell ids."""
    nb = new_notebook(cells=[nbformat.from_dict(dict(c)) for c in cells])
    nb.metadata = {
        "kernelspec": {
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
            "name": "python3",
        },
        "language_info": {"name": "python"},
    }
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
    nbformat.validate(nb)
    return nb


def render(name: str) -> str:
    """The text of notebook ``name`` as written to disk."""
    return nbformat.writes(build(NOTEBOOKS[name])) + "\n"


def main() -> int:
    for name in NOTEBOOKS:
        path = HERE / f"{name}.ipynb"
        path.write_text(render(name), encoding="utf-8")
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
