"""Peak memory of a search over a space of 10^6 points (memory backend, budget 30).

The space: 2,880 chunk shapes x 6 codecs x 22 levels x 3 shuffles = 1,140,480
grid points of a 2 MiB workload, searched with ``strategy: auto`` by the serial
executor (trials in a worker process).  A grid this size would not even be
planned (``iotune run`` refuses more than 10,000 points without ``--yes``); the
search keeps only the points it visits.

    python benchmarks/search_memory.py [--budget 30] [--out DIR]

Prints the peak resident memory of this process (the search: sampler, space,
journal, results) and of the largest worker process, in MiB.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path


def write_million_spec(path: Path, *, budget: int = 30) -> Path:
    """A memory-backend spec of 1,140,480 grid points."""
    import yaml

    shapes = [
        [t, z, y, x]
        for t in range(1, 65)
        for z in (1, 2, 4, 8, 16)
        for y in (8, 16, 32)
        for x in (8, 16, 32)
    ]
    spec = {
        "version": 1,
        "name": "million",
        "workload": {"shape": {"time": 64, "z": 16, "y": 32, "x": 32}, "dtype": "int16"},
        "backend": "memory",
        "parameters": {
            "chunks": shapes,
            "codec": ["zstd", "blosc-zstd", "blosc-lz4", "zlib", "blosc-zlib", "bzip2"],
            "level": list(range(1, 23)),
            "shuffle": ["none", "byte", "bit"],
        },
        "read": {"patterns": ["full"]},
        "measure": {"repeats": 1, "cache": "warm", "fsync": False},
        "search": {"strategy": "auto", "budget": budget, "objective": "write", "seed": 0},
    }
    path.write_text(yaml.safe_dump(spec, default_flow_style=None, sort_keys=False))
    return path


def _peak_mib() -> float:
    """This process's peak RSS (VmHWM), in MiB.

    Not ``getrusage(RUSAGE_SELF).ru_maxrss``: Linux carries that over an exec
    from the forked parent, so a search started by a large process (pytest)
    would report the parent's peak.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--out", type=Path, help="default: a temporary directory")
    args = parser.parse_args(argv)
    import iotune

    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "out"
        spec = write_million_spec(Path(tmp) / "million.yaml", budget=args.budget)
        start = time.perf_counter()
        ds = iotune.tune(spec, out=out, progress=False)
        elapsed = time.perf_counter() - start
        self_mib = _peak_mib()
        worker_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(
            f"space {ds.attrs['search_space_size']:,} points "
            f"(~{ds.attrs['search_applicable']:,} applicable), {ds.attrs['search_trials']} trials, "
            f"{ds.sizes['point']} points stored, {elapsed:.0f} s; peak RSS: search "
            f"{self_mib:.0f} MiB, largest worker {worker_mib:.0f} MiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
