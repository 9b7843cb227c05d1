"""``iotune apply`` to netCDF4 and HDF5: the chunk pipeline against the serial region copier.

The source is ``benchmarks/apply.py``'s (float32 map chunks, 1 x lat x lon,
uncompressed); each run is the command line a user runs, in a subprocess whose process
tree is sampled for its resident memory, the source's pages dropped first.  The
serial copier runs with ``IOTUNE_APPLY_ENGINE=regions``.  The figures of
docs/benchmarks.md:

    PYTHONPATH=. .venv/bin/python benchmarks/apply_pipeline.py --shape 512x1024x1024 \\
        --codecs "zlib level=4 shuffle=byte" "zlib level=1 shuffle=byte" none
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.apply import make_source, run_sampled


def run(src: Path, target: Path, settings: str, *, engine: str, max_mem: str) -> dict[str, object]:
    """One conversion by ``engine`` (``pipeline`` or ``regions``): wall time, peak memory."""
    from iotune.measuring.measure import evict

    for path in target.parent.glob(target.name + "*"):
        path.unlink()
    evict([src])
    cmd = [sys.executable, "-m", "iotune", "apply", "--settings", settings, str(src)]
    cmd += ["-o", str(target), "--max-mem", max_mem, "--no-progress", "--verify", "none"]
    cmd += ["--no-measure"]
    if engine == "regions":
        os.environ["IOTUNE_APPLY_ENGINE"] = "regions"
    try:
        found = run_sampled(cmd, timeout=3600)
    finally:
        os.environ.pop("IOTUNE_APPLY_ENGINE", None)
    found["size_mib"] = round(target.stat().st_size / 2**20) if target.exists() else None
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="256x1024x1024")
    parser.add_argument("--chunks", default="256x16x16")
    parser.add_argument("--codecs", nargs="+", default=["zlib level=4 shuffle=byte"])
    parser.add_argument("--suffixes", nargs="+", default=[".nc", ".h5"])
    parser.add_argument("--max-mem", default="1GiB")
    parser.add_argument("--repeats", type=int, default=1, help="each pair, alternating")
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    shape = tuple(int(n) for n in args.shape.split("x"))
    work = Path(tempfile.mkdtemp(dir=args.dir, prefix="iotune-pipeline-"))
    try:
        src = work / "source.nc"
        make_source(src, shape)  # type: ignore[arg-type]
        for codec in args.codecs:
            settings = f"chunks={args.chunks} codec={codec}"
            for suffix in args.suffixes:
                for repeat in range(args.repeats):  # alternating: a busy spell hits both
                    order = ("regions", "pipeline")[:: 1 if repeat % 2 == 0 else -1]
                    for engine in order:
                        found = run(
                            src,
                            work / f"out{suffix}",
                            settings,
                            engine=engine,
                            max_mem=args.max_mem,
                        )
                        found |= {"load": round(os.getloadavg()[0], 1)}
                        line = {"settings": settings, "target": suffix, "engine": engine}
                        print(json.dumps(line | found), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
