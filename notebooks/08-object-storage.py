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
# # Object storage: requests, not bytes
#
# On S3, GCS or Azure every request waits 10-200 ms for its first byte, so how many
# requests a format makes, how many it keeps in flight and how much it fetches in vain
# decide speed (and price) as much as bandwidth does. With a `storage:` section in the
# spec, iotune writes its trials as objects, through three backends:
#
# - `object`: the workload as one raw object, PUT whole or multipart, read by ranged GETs
#   (`part_size`, `request_concurrency`, `coalesce`): what the store itself delivers;
# - `zarr-object`: Zarr v3 through zarr's `ObjectStore` (obstore) or `FsspecStore` (s3fs),
#   the `client` knob, with `chunks`, `shards`, codecs, `request_concurrency` (zarr's
#   `async.concurrency`) and `consolidated` metadata;
# - `hdf5-object`: HDF5 written locally by h5py, uploaded, and read by h5py through an
#   fsspec file (`cache_type`, `read_block_size`, `part_size`, `request_concurrency`,
#   paging).
#
# Every request is counted by kind with its bytes and its time to first byte, and every
# read is *cold*: a new client, with no cache and no open connection.
#
# No cloud account is needed here: the notebook starts an S3-compatible server on this
# machine (moto's server mode) and a small proxy that holds every request for a few
# milliseconds, as a real store's latency does. The same sweep runs at 0 ms and 30 ms of
# added latency, and the best configuration changes.
#
# **Against a real store:** put a `storage:` section like the one below in a spec and run
# `iotune run SPEC -o OUT`, with your credentials in the environment.

# %% tags=["parameters"]
shape = {"time": 8, "y": 128, "x": 128}  # the int16 field written as objects (256 KiB)
chunks = [8, 64, 64]  # zarr-object and hdf5-object chunks (or a list of chunk shapes)
shards = ["none", [8, 128, 128]]  # zarr-object: one object per chunk, or all in one shard
pixels = 8  # the time-series read: every time step at this many points, one read each
request_concurrency = [1, 8]  # requests in flight per read or write
latencies_ms = [0, 30]  # added to every request by the proxy
repeats = 1  # measurements per configuration; 3 or more for a verdict beyond noise
out = "../results/nb-08-object-storage"  # spec.yaml and a results folder per latency

# %% [markdown]
# ## An S3 server on this machine
#
# moto's server mode speaks S3 on a free local port; the last cell stops it. iotune never
# reads credentials from a spec (a spec is copied into every results file, and a key in
# it would travel with them): obstore and s3fs take them from `AWS_ACCESS_KEY_ID` and
# `AWS_SECRET_ACCESS_KEY` in the environment, or from `~/.aws`. moto accepts any keys, so
# this kernel sets dummy ones; for a real store, export yours before starting Jupyter and
# leave these lines out.

# %%
import atexit
import os
import socket
import subprocess
import sys
import time

import boto3  # installed with moto

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
server = subprocess.Popen(
    [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
atexit.register(server.terminate)  # also when the notebook stops half-way
for _ in range(300):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        break
    except OSError:
        time.sleep(0.1)
else:
    raise RuntimeError("moto's S3 server did not start within 30 s")

os.environ["AWS_ACCESS_KEY_ID"] = "notebook-08-dummy-key"
os.environ["AWS_SECRET_ACCESS_KEY"] = "notebook-08-dummy-secret"
bucket = "iotune-demo"
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1")
s3.create_bucket(Bucket=bucket)
print(f"S3 server at http://127.0.0.1:{port}, bucket {bucket}")

# %% [markdown]
# ## Latency
#
# The proxy forwards each connection to the server and holds the first bytes of every new
# request for `delay` seconds, so each request pays the delay once, whatever its size
# (`netem` would do it in the kernel, where it is available). 0 ms goes to the server itself.

# %%
import asyncio
import contextlib
import threading


def latency_proxy(target_port: int, delay: float) -> int:
    """Start a proxy to ``target_port`` that delays each request; returns its port."""

    async def connection(reader, writer):
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
        answered = asyncio.Event()  # set: the client's next bytes start a new request
        answered.set()

        async def upstream():
            while data := await reader.read(1 << 16):
                if answered.is_set():
                    answered.clear()
                    await asyncio.sleep(delay)
                up_writer.write(data)
                await up_writer.drain()
            up_writer.close()

        async def downstream():
            while data := await up_reader.read(1 << 16):
                answered.set()
                writer.write(data)
                await writer.drain()
            writer.close()

        with contextlib.suppress(ConnectionError):
            await asyncio.gather(upstream(), downstream())

    loop = asyncio.new_event_loop()  # in a thread of its own: Jupyter runs one here
    threading.Thread(target=loop.run_forever, daemon=True).start()
    serving = asyncio.start_server(connection, "127.0.0.1", 0)
    proxy = asyncio.run_coroutine_threadsafe(serving, loop).result(10)
    return proxy.sockets[0].getsockname()[1]


endpoints = {
    ms: f"http://127.0.0.1:{latency_proxy(port, ms / 1000) if ms else port}" for ms in latencies_ms
}
endpoints

# %% [markdown]
# ## The sweep
#
# One spec, run once per latency; only `storage.endpoint` changes. The three backends and
# their knobs form one grid: a knob a backend does not take (`shards` for `hdf5-object`,
# `client` for `object`) is recorded as not applicable and its point measured once.
# `prices` (per request and per GB out) add an estimated cost of each write and read.

# %%
from pathlib import Path

import yaml

import iotune

spec = {
    "version": 1,
    "name": "object-storage",
    "workload": {"shape": shape, "dtype": "int16", "field": "smooth"},
    "backend": ["zarr-object", "object", "hdf5-object"],
    "storage": {
        "url": f"s3://{bucket}/nb08",
        "endpoint": endpoints[latencies_ms[0]],
        "region": "us-east-1",
        "prices": {"GET": 4e-7, "HEAD": 4e-7, "PUT": 5e-6, "LIST": 5e-6, "transfer_GB": 0.09},
    },
    "parameters": {
        "chunks": chunks,
        "shards": shards,
        "codec": "zlib",
        "level": 1,
        "client": ["obstore", "fsspec"],
        "request_concurrency": request_concurrency,
    },
    "read": {"patterns": ["full", "timeseries"], "timeseries": {"pixels": pixels}},
    "measure": {"repeats": repeats, "noise_probes": 0},
}
Path(out).mkdir(parents=True, exist_ok=True)
spec_path = Path(out) / "spec.yaml"
spec_path.write_text(yaml.safe_dump(spec, sort_keys=False, default_flow_style=None))
print(spec_path.read_text())
print(f"{len(iotune.make_plan(iotune.load_spec(spec_path)).trials)} trials per latency")

# %%
runs = {}
for ms in latencies_ms:
    started = time.monotonic()
    sweep = iotune.load_spec(spec_path, overrides={"storage.endpoint": endpoints[ms]})
    runs[ms] = iotune.run(sweep, out=Path(out) / f"{ms}ms", overwrite=True, progress=False)
    print(f"+{ms} ms: {time.monotonic() - started:.0f} s")

# %% [markdown]
# ## Requests, first bytes, over-read
#
# The runs side by side, along a new `latency_ms` dimension. Request counts have a
# `request` dimension (GET, PUT, HEAD, LIST, DELETE, POST) beside the swept parameters,
# `pattern` and `repeat`, so xarray selects them by name. Points a backend does not take
# are NaN, left out of the tables.

# %%
import pandas as pd
import xarray as xr

ds = xr.concat(
    list(runs.values()),
    dim=pd.Index(list(runs), name="latency_ms"),
    data_vars="all",
    coords="different",
    compat="equals",
    join="outer",
    combine_attrs="drop_conflicts",
)


def table(da: xr.DataArray, columns: str) -> pd.DataFrame:
    """Median over repeats, one row per measured configuration."""
    return da.median("repeat").to_series().dropna().unstack(columns)


table(ds.read_requests.sel(request="GET", latency_ms=0), "pattern")

# %% [markdown]
# GETs per read. A full Zarr read is one GET per chunk plus the group's and the array's
# metadata; with shards, one GET fetches the whole shard. The time series (every step at
# `pixels` points, one read each) is where shards cost: each pixel's read fetches the
# shard's index, then its chunk. `object` fetches each pixel's bytes, one per time step,
# in one ranged GET (runs less than `coalesce` apart are merged), and `hdf5-object` reads
# ahead a `read_block_size` (5 MiB by default, more than this whole file), so after its
# first GET the time series comes from its cache.
#
# Both Zarr clients fetch the same chunks, but not with the same requests. All requests
# of one Zarr configuration, by client: the write, then the time series.

# %%
# one Zarr configuration (the first shards value, the most requests in flight), both clients
one = {"latency_ms": 0, "backend": "zarr-object", "shards": ds.shards.values[0]}
one["request_concurrency"] = ds.request_concurrency.values[-1]
print(table(ds.write_requests.sel(**one), "request"))
table(ds.read_requests.sel(pattern="timeseries", **one), "request")

# %% [markdown]
# s3fs asks for each object's size (HEAD) before its GET, and checks keys with HEAD and
# LIST as zarr writes; every read also starts a new s3fs client, which costs more time than
# an obstore store. The time to first byte of a GET is the latency the store adds: the
# proxy's 30 ms on top of the local server's few.

# %%
ttfb = table(ds.read_ttfb_median_ms.sel(pattern="full"), "latency_ms")
ttfb.groupby(level="backend").median().round(1)

# %% [markdown]
# Over-read: the bytes fetched over the bytes the read needed. A time series needs two
# bytes per step and pixel; Zarr fetches whole chunks, `object` a range spanning all steps
# per pixel, `hdf5-object` the whole file once. A full read fetches each byte once (1).

# %%
table(ds.read_over_read.sel(latency_ms=0), "pattern").round(1)

# %% [markdown]
# And what a million such reads would cost at the spec's `prices` (S3's list prices in
# dollars: GET and HEAD 0.0004, PUT and LIST 0.005 per thousand, 0.09 per GB out):
# requests and bytes fetched in vain both show up on the bill.

# %%
(table(ds.read_cost.sel(latency_ms=0), "pattern") * 1e6).round(2)

# %% [markdown]
# ## Latency changes the answer
#
# The time series read and the write of every configuration, at each latency. At 0 ms
# requests are nearly free, and the readers that fetch exact ranges (`object`, Zarr over
# obstore) read the time series fastest, although `object` fetches the most. At 30 ms each
# request costs more than its bytes: `hdf5-object`, one GET for all pixels, reads the time
# series about twice as fast as `object`'s one GET per pixel; the unsharded Zarr store (a
# GET per pixel) beats the sharded one (the index, then the chunk); and requests in flight
# (`request_concurrency`) shorten the unsharded store's write and full read, whose chunks
# can travel together, but not the time series, read one pixel at a time.

# %%
import matplotlib.pyplot as plt

#: the swept knobs each backend takes (the others are not applicable to it)
TAKES = {"object": {"request_concurrency"}, "hdf5-object": {"chunks", "request_concurrency"}}


def label(names: list[str], row: tuple) -> str:
    point = dict(zip(names, row, strict=True))
    backend = point.pop("backend")
    takes = TAKES.get(backend, set(point))
    shown = [f"{k.replace('request_', '')}={v}" for k, v in point.items() if k in takes]
    return f"{backend}: {' '.join(shown)}"


metrics = {"time series read": ds.read_s.sel(pattern="timeseries"), "write": ds.write_s}
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
for ax, (name, da) in zip(axes, metrics.items(), strict=True):
    seconds = table(da, "latency_ms")
    y = range(len(seconds))
    for i, ms in enumerate(seconds.columns):
        ax.barh([v + 0.4 * i for v in y], seconds[ms], height=0.4, label=f"+{ms} ms")
    ax.set_yticks([v + 0.2 for v in y], [label(seconds.index.names, r) for r in seconds.index])
    ax.tick_params(axis="y", labelsize=7)
    ax.set_xscale("log")
    ax.set_xlabel(f"{name} (s, median of repeats)")
axes[0].invert_yaxis()
axes[0].legend()
fig.tight_layout()

# %% [markdown]
# What `iotune recommend` picks for the time series at each latency, and its report for
# the slow store with the settings to paste. With a single repeat it cannot say whether
# the winner beats the runner-up beyond noise; `-p repeats 3` lets it (and takes about
# three times as long).

# %%
from iotune.app.api import recommendation_text

picks = {ms: iotune.recommend(r, objective="read:timeseries") for ms, r in runs.items()}
for ms, rec in picks.items():
    print(f"+{ms} ms: {rec.winner.label}")
print()
print(recommendation_text(picks[latencies_ms[-1]]))

# %% [markdown]
# Each run removed its objects when it ended; stop the server.

# %%
server.terminate()
server.wait(10)
