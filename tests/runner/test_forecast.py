"""The forecast of a plan: chunks a read takes, seconds per trial, wall time per worker count."""

from __future__ import annotations

import pytest

from iotune.runner import forecast
from iotune.runner.expected import CodecCost, codec_key, profile_codecs
from iotune.runner.plan import make_plan
from iotune.specfile.parse import load_spec_text

SPEC = """\
version: 1
name: forecast
workload: {shape: {time: 32, y: 128, x: 128}, dtype: int16}
backend: netcdf4
parameters:
  chunks: [[32, 16, 16], [1, 128, 128]]
  codec: [none, zlib]
  chunk_cache: [64KiB, 16MiB]
read: {patterns: [full, timeseries], timeseries: {pixels: 16}}
measure: {repeats: 2, noise_probes: 0}
"""
RATES = forecast.Rates(500e6, 800e6, repeat_s=0.05, startup_s=1.0)


def _sweep(text: str = SPEC):
    sweep = load_spec_text(text)
    return sweep, make_plan(sweep)


def test_a_time_series_rereads_map_chunks_unless_the_cache_holds_them():
    sweep, _ = _sweep()
    read = sweep.read
    small = forecast.chunk_reads(
        "timeseries", sweep.workload, read, (1, 128, 128), {"chunk_cache": 64 * 2**10}
    )
    large = forecast.chunk_reads(
        "timeseries", sweep.workload, read, (1, 128, 128), {"chunk_cache": 16 * 2**20}
    )
    # 16 pixels x 32 maps, each map one chunk: read again per pixel, or once each
    assert (small, large) == (16 * 32, 32)
    # long in time: each pixel's history is one chunk, whatever the cache
    assert forecast.chunk_reads("timeseries", sweep.workload, read, (32, 16, 16), {}) <= 16
    assert forecast.chunk_reads("full", sweep.workload, read, (32, 16, 16), {}) == 64


def test_compression_costs_what_the_probe_measured_and_saves_what_it_stored():
    sweep, plan = _sweep()
    keys = {codec_key(t.params) for t in plan.trials}
    codecs = profile_codecs(sweep.workload, keys)
    found = next(c for k, c in codecs.items() if k[0] == "zlib")
    assert 0 < found.stored_share < 1 and found.encode_s_per_byte > 0
    costs = {t.label(): forecast.trial_cost(sweep, t, codecs, RATES) for t in plan.trials}
    plain = costs["chunks=32x16x16 codec=none shuffle=none chunk_cache=64KiB"]
    packed = next(c for label, c in costs.items() if "32x16x16 codec=zlib" in label)
    assert packed.disk_bytes < plain.disk_bytes == sweep.workload.nbytes
    # the rereading layout is the costliest of its codec
    maps = costs["chunks=1x128x128 codec=none shuffle=none chunk_cache=64KiB"]
    assert (
        maps.seconds > costs["chunks=1x128x128 codec=none shuffle=none chunk_cache=16MiB"].seconds
    )


def test_storage_trials_share_one_host_and_cpu_trials_spread_over_workers():
    sweep, plan = _sweep()
    files = forecast.forecast(sweep, plan.trials, {}, RATES)
    assert files.wall(4) == pytest.approx(files.wall(1))
    assert files.wall(4, per_host=4) < files.wall(1)
    memory, mplan = _sweep(
        SPEC.replace("backend: netcdf4", "backend: memory").replace(
            "  chunk_cache: [64KiB, 16MiB]\n", ""
        )
    )
    cpu = forecast.forecast(
        memory, mplan.trials, {k: CodecCost(1e-8, 1e-8, 0.5) for k in [("zlib", 4, "none")]}, RATES
    )
    serial, two = cpu.wall(1) - cpu.startup_s, cpu.wall(2) - cpu.startup_s
    assert two == pytest.approx(serial / 2, rel=0.35)


def test_a_trial_that_is_most_of_the_sweep_is_named():
    sweep, plan = _sweep()
    keys = {codec_key(t.params) for t in plan.trials if t.params["codec"] == "zlib"}
    codecs = {key: CodecCost(1e-7, 5e-8, 0.4) for key in keys if key is not None}
    found = forecast.forecast(sweep, plan.trials, codecs, RATES)
    (worst, share), *_ = found.dominating(0.2)
    assert "1x128x128 codec=zlib" in worst.trial.label() and "64KiB" in worst.trial.label()
    assert 0.2 < share < 1
    assert found.dominating(0.99) == []
