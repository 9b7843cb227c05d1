"""Which time model fits ``iotune apply``: read + write, or max(read, write)?

For each target layout, three times: the source's regions read cold alone (the dry
run's probe, every region), the same blocks written alone from memory, then the
conversion itself (a fresh open, the source evicted, ``--verify none``).  Prints each
run and the error of both models against the conversion's seconds; the dry run
(``iotune/convert/predict.py``) uses the model that fits.

    .venv/bin/python benchmarks/apply_time_model.py [--dir DIR] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from iotune.convert.convert import convert, prepare
from iotune.convert.layout import layout_of, parse_settings
from iotune.convert.nc_target import NetcdfTarget
from iotune.convert.probe import probe_read
from iotune.measuring import measure

#: (settings, --max-mem): one region and eight regions, compressed and not
LAYOUTS = [
    ("chunks=64x16x16 codec=zlib level=4", 2**30),
    ("chunks=64x16x16 codec=none", 2**30),
    ("chunks=16x16x16 codec=zlib level=1", 20_000_000),
    ("chunks=16x256x256 codec=none", 20_000_000),
]


def make_source(path: Path, shape: tuple[int, int, int] = (256, 256, 256)) -> Path:
    """A 64 MiB float32 random walk in map chunks (1 x y x x), zlib 1."""
    import netCDF4

    with netCDF4.Dataset(path, "w") as nc:
        for name, size in zip(("time", "y", "x"), shape, strict=True):
            nc.createDimension(name, size)
        var = nc.createVariable(
            "tas", "f4", ("time", "y", "x"), chunksizes=(1, *shape[1:]), zlib=True, complevel=1
        )
        walk = np.cumsum(np.random.default_rng(0).normal(0, 1, shape).astype("f4"), axis=0)
        var[:] = np.round(walk * 100) / 100 + 280
    return path


def one_run(source: Path, work: Path, settings: str, max_mem: int) -> tuple[float, float, float]:
    """(read alone, write alone, conversion) seconds."""
    layout = layout_of(parse_settings(settings), backend="netcdf4")
    target = work / "out.nc"
    job = prepare(source, target, layout, max_mem=max_mem)
    probe = probe_read(
        job.source, job.regions, sorted(job.by_region), region_dim=job.region_dim, budget=1 << 40
    )
    read_s = job.total_bytes / probe.nbytes * probe.seconds  # the probe samples 3 regions
    job.source.close()
    job = prepare(source, target, layout, max_mem=max_mem)
    blocks = [
        (r, n, job.source.ds[n].isel({job.region_dim: slice(r.start, r.stop)}).values)
        for r in job.regions
        for n in sorted(job.by_region)
    ]
    alone = NetcdfTarget.create(
        work / "w.nc", job.source, layout, job.converted, by_region=job.by_region
    )
    began = time.perf_counter()
    for region, name, block in blocks:
        alone.write(name, region.start, region.stop, block)
        alone.sync()
    write_s = time.perf_counter() - began
    alone.close()
    (work / "w.nc").unlink()
    job.source.close()
    job = prepare(source, target, layout, max_mem=max_mem)
    measure.evict([source])
    report = convert(job, verify_mode="none")
    for leftover in work.glob("out.nc*"):
        leftover.unlink()
    return read_s, write_s, report.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="where to write (default: a temporary folder)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        work = Path(tmp)
        source = make_source(work / "source.nc")
        errors: dict[str, list[float]] = {"sum": [], "max": []}
        for settings, max_mem in LAYOUTS:
            for _ in range(args.runs):
                read_s, write_s, took = one_run(source, work, settings, max_mem)
                errors["sum"].append((read_s + write_s) / took - 1)
                errors["max"].append(max(read_s, write_s) / took - 1)
                print(
                    f"{settings:<36} read {read_s:5.2f} s  write {write_s:5.2f} s  "
                    f"conversion {took:5.2f} s  sum {errors['sum'][-1]:+.0%}  "
                    f"max {errors['max'][-1]:+.0%}"
                )
        for model, found in errors.items():
            print(
                f"{model}: {min(found):+.0%} to {max(found):+.0%}, "
                f"median |error| {statistics.median(abs(e) for e in found):.0%}"
            )


if __name__ == "__main__":
    main()
