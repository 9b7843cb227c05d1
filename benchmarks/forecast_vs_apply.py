"""A user's function: the speedup ``recommend`` forecasts against what ``apply`` then measures.

The path a user takes, through the CLI: a CF netCDF file of daily maps (a noleap
calendar, zlib level 1, one map per chunk, as a model writes it), a function of the
user's (a monthly mean over a box, by coordinates), a sweep of the file itself
(``field: file``) over chunk shapes and codecs beside ``baselines: [source]``, then
``iotune recommend --objective read:boxmonthly --format json`` (the forecast: the
winner's speedup over the file as it is, seconds a call) and ``iotune apply`` of that
pick to the file, whose record holds the speedup measured on the real file after the
conversion (cold, the same function).  Issue 41 asks the two within 30 %.

    PYTHONPATH=. .venv/bin/python benchmarks/forecast_vs_apply.py --days 365 --lat 90 --lon 180
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ANALYSIS = """def box_monthly(ds):
    box = ds["tas"].sel(lat=slice(20, 40), lon=slice(60, 100))
    return box.resample(time="1MS").mean()
"""
SPEC = """version: 1
name: forecast
workload: {{field: file, path: tas.nc, variable: tas}}
backend: netcdf4
parameters:
  chunks: [[1, {lat}, {lon}], [{days}, 15, 15], [30, {lat}, {lon}]]
  codec: [none, zlib]
  level: 1
read:
  patterns: [{{name: boxmonthly, call: "analysis:box_monthly"}}]
measure: {{repeats: {repeats}}}
baselines: [source]
"""


def make_file(path: Path, days: int, nlat: int, nlon: int) -> None:
    """tas(time, lat, lon) in K: a seasonal cycle, a latitude gradient and noise."""
    import xarray as xr

    time = xr.date_range("2001-01-01", periods=days, freq="D", calendar="noleap", use_cftime=True)
    lat = np.linspace(-89, 89, nlat)
    lon = np.linspace(0, 360, nlon, endpoint=False)
    season = 10 * np.cos(2 * np.pi * np.arange(days) / 365)[:, None, None]
    rng = np.random.default_rng(0)
    tas = 288 - 30 * np.abs(np.sin(np.deg2rad(lat)))[None, :, None] + season
    tas = (tas + rng.normal(0, 0.5, (days, nlat, nlon))).astype("f4")
    ds = xr.Dataset(
        {"tas": (("time", "lat", "lon"), tas, {"units": "K"})},
        coords={"time": time, "lat": lat, "lon": lon},
    )
    encoding = {"tas": {"zlib": True, "complevel": 1, "chunksizes": (1, nlat, nlon)}}
    ds.to_netcdf(path, encoding=encoding)


def iotune(cwd: Path, *args: str) -> str:
    """Run the CLI in ``cwd``; its standard output (exits on failure)."""
    done = subprocess.run(
        [sys.executable, "-m", "iotune", *args], cwd=cwd, capture_output=True, text=True
    )
    if done.returncode not in (0, 1):
        sys.exit(f"iotune {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return done.stdout


def one_round(work: Path) -> dict[str, float | str]:
    """Sweep, recommend, apply; the forecast and the measured speedup of the function."""
    iotune(work, "run", "spec.yaml", "-o", "out", "--no-progress", "--overwrite")
    rec = json.loads(
        iotune(work, "recommend", "out", "--objective", "read:boxmonthly", "--format", "json")
    )
    (forecast,) = [
        r for r in rec["vs_baselines"] if r["baseline"] == "source" and r["pattern"] == "boxmonthly"
    ]
    target = work / "target.nc"
    for old in work.glob("target.nc*"):
        old.unlink()
    apply = ["apply", "out", "tas.nc", "-o", "target.nc", "--objective", "read:boxmonthly"]
    iotune(work, *apply, "--no-progress")
    after = json.loads((work / "target.nc.iotune-apply.json").read_text())
    measured = after["patterns"]["boxmonthly"]
    target.unlink()
    return {
        "pick": rec["winner"]["label"],
        "forecast": forecast["speedup"],
        "forecast_low": forecast["low"],
        "forecast_high": forecast["high"],
        "measured": measured["speedup"],
        "measured_low": measured["low"],
        "measured_high": measured["high"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--lat", type=int, default=90)
    parser.add_argument("--lon", type=int, default=180)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        make_file(work / "tas.nc", args.days, args.lat, args.lon)
        (work / "analysis.py").write_text(ANALYSIS)
        spec = SPEC.format(days=args.days, lat=args.lat, lon=args.lon, repeats=args.repeats)
        (work / "spec.yaml").write_text(spec)
        print("| pick | forecast over the file | measured after apply | measured / forecast |")
        print("| --- | ---: | ---: | ---: |")
        for _ in range(args.rounds):
            r = one_round(work)
            print(
                f"| {r['pick']} | {r['forecast']:.2f}x [{r['forecast_low']:.2f}x to "
                f"{r['forecast_high']:.2f}x] | {r['measured']:.2f}x [{r['measured_low']:.2f}x "
                f"to {r['measured_high']:.2f}x] | "
                f"{float(r['measured']) / float(r['forecast']):.2f} |"
            )


if __name__ == "__main__":
    main()
