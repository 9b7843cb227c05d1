"""Does latency change the answer? A Zarr sweep on object storage at 0, 20 and 50 ms.

For each ``--latency-ms`` (default 0, 20, 50) ``iotune run`` (the CLI, in a
new process) sweeps one spec over ``zarr-object`` on moto's S3 server
(started here on 127.0.0.1), reached through ``tests/objectstore/proxy.py``,
which holds the first bytes of every request for the latency (0: the same
proxy, no delay; this kernel has no netem).  The spec: a 16 MiB random int16
workload ``{time: 32, y: 512, x: 512}``, no codec, and

- layout: small chunks ``[16, 128, 128]`` (512 KiB, 32 objects), large
  chunks ``[32, 512, 256]`` (8 MiB, 2 objects), or the small chunks in shards
  ``[32, 256, 512]`` (8 MiB, 2 objects, read by ranged GETs); swept as chunks x
  shards, the fourth combination (large chunks in those shards) does not
  apply and is not measured;
- ``request_concurrency`` (zarr's ``async.concurrency``) 1, 4, 16;
- ``client`` obstore (zarr's ObjectStore) or fsspec (s3fs);
- reads ``full``, ``spatial`` (a 256 x 256 window at ``--steps`` steps) and
  ``timeseries`` (``--pixels`` pixel histories), ``--repeats`` repeats
  (interleaved by iotune; 6 is the fewest with a 95 % interval of the median).

Per latency and pattern it prints the best point with iotune's 95 % interval
of its median (``full`` in MiB/s; ``spatial`` and ``timeseries``, which
deliver little, in ms per read) and the points whose interval reaches the
best's; what the 0 ms winner is worth at the other latencies (its throughput
over the best's); and obstore over fsspec as a ratio of throughputs (above
1: obstore is faster), of each client's best (95 % bootstrap interval, each
side's repeats resampled) and, as median and range, at the same layout and
concurrency.  ``--markdown`` prints the tables ``docs/benchmarks.md`` holds.
The grid was cut to this to keep all three latencies within about a quarter
of an hour here (a 32 MiB workload with four layouts and 4 spatial steps took
16 minutes at 50 ms alone).

Run:

    .venv/bin/python benchmarks/objectstore_latency.py [--latency-ms 0,20,50]
        [--repeats 6] [--steps 2] [--pixels 4] [--json FILE] [--markdown]
        [--from-json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from objectstore_fidelity import (  # a sibling script, not a package
    REGION,
    credentials,
    endpoint_for,
    iotune_run,
    load,
    moto_server,
    new_bucket,
    ratio_interval,
)

SPEC = """version: 1
name: objectstore-latency-{latency}ms
workload: {{shape: {{time: 32, y: 512, x: 512}}, dtype: int16, field: random}}
backend: zarr-object
storage: {{url: "s3://{bucket}/runs", endpoint: "{endpoint}", region: {region}}}
parameters:
  chunks: [[16, 128, 128], [32, 512, 256]]
  shards: [none, [32, 256, 512]]
  codec: none
  request_concurrency: [1, 4, 16]
  client: [obstore, fsspec]
read:
  patterns: [full, spatial, timeseries]
  spatial: {{time: {steps}, y: 0.5, x: 0.5}}
  timeseries: {{pixels: {pixels}}}
measure: {{repeats: {repeats}, noise_probes: 0}}
"""
PATTERNS = ("full", "spatial", "timeseries")
AXES = ("chunks", "shards", "request_concurrency", "client")


def points(ds: Any, pattern: str) -> list[dict[str, Any]]:
    """Every measured point of ``pattern``: labels, repeats, median and interval, GETs."""
    read = ds["read_MiBps"].sel(pattern=pattern)
    found = []
    for index in np.ndindex(*(read.sizes[a] for a in AXES)):
        where = {a: read[a].values[i] for a, i in zip(AXES, index, strict=True)}
        if str(ds["status"].sel(where).item()) != "ok":
            continue  # the large chunks in the shards: not applicable
        point = ds.sel(where).sel(pattern=pattern)
        values = point["read_MiBps"].values.ravel()
        seconds = point["read_s"].values.ravel()
        keep = np.isfinite(values)
        low, high = (float(point[f"read_MiBps_ci_{end}"]) for end in ("low", "high"))
        # every point delivers the same bytes per read: ms = 1e3 * MiB / (MiB/s)
        mib = float(np.median(values[keep] * seconds[keep]))
        median = float(np.median(values[keep]))
        found.append(
            {
                "layout": layout(str(where["chunks"]), str(where["shards"])),
                "concurrency": int(where["request_concurrency"]),
                "client": str(where["client"]),
                "MiBps": [float(v) for v in values[keep]],
                "median": median,
                "ci": [low, high],
                "ms": 1e3 * mib / median,
                "ms_ci": [1e3 * mib / high, 1e3 * mib / low],
                "gets": float(point["read_requests"].sel(request="GET").median()),
                "heads": float(point["read_requests"].sel(request="HEAD").median()),
            }
        )
    return found


def layout(chunks: str, shards: str) -> str:
    return chunks if shards in ("none", "None") else f"{chunks} in {shards}"


def name(point: dict[str, Any]) -> str:
    return f"{point['layout']}, c{point['concurrency']}, {point['client']}"


def figure(point: dict[str, Any], pattern: str) -> str:
    """The point's median and 95 % interval: MiB/s for ``full``, else ms per read."""
    if pattern == "full":
        return f"{point['median']:.1f} MiB/s ({point['ci'][0]:.1f}-{point['ci'][1]:.1f})"
    return f"{point['ms']:.0f} ms ({point['ms_ci'][0]:.0f}-{point['ms_ci'][1]:.0f})"


def analyse(ds: Any) -> dict[str, Any]:
    """Per pattern: the best point, the points tied with it, obstore over fsspec."""
    out = {}
    for pattern in PATTERNS:
        found = points(ds, pattern)
        best = max(found, key=lambda p: p["median"])
        tied = [p for p in found if p is not best and p["ci"][1] >= best["ci"][0]]
        by_client = {c: [p for p in found if p["client"] == c] for c in ("obstore", "fsspec")}
        bests = {c: max(ps, key=lambda p: p["median"]) for c, ps in by_client.items()}
        same = {(p["layout"], p["concurrency"]): p for p in by_client["fsspec"]}
        paired = [
            p["median"] / same[(p["layout"], p["concurrency"])]["median"]
            for p in by_client["obstore"]
            if (p["layout"], p["concurrency"]) in same
        ]
        out[pattern] = {
            "points": found,
            "best": best,
            "tied": tied,
            "best_per_client": bests,
            "obstore_over_fsspec_best": bests["obstore"]["median"] / bests["fsspec"]["median"],
            "obstore_over_fsspec_best_95": ratio_interval(
                bests["obstore"]["MiBps"], bests["fsspec"]["MiBps"]
            ),
            "obstore_over_fsspec_same_point": paired,
        }
    return out


def key(point: dict[str, Any]) -> tuple[str, int, str]:
    return point["layout"], point["concurrency"], point["client"]


def worth(found: dict[str, Any], pattern: str, reference: dict[str, Any]) -> float:
    """Throughput of ``reference``'s point in ``found`` over the best's there."""
    for p in found[pattern]["points"]:
        if key(p) == key(reference):
            return p["median"] / found[pattern]["best"]["median"]
    return float("nan")


def report_latency(latency: float, found: dict[str, Any], first: dict[str, Any] | None) -> None:
    print(f"\n{latency:g} ms added per request:")
    for pattern in PATTERNS:
        row = found[pattern]
        best = row["best"]
        ratio_low, ratio_high = row["obstore_over_fsspec_best_95"]
        paired = row["obstore_over_fsspec_same_point"]
        print(
            f"  {pattern:<10} best {name(best)}: {figure(best, pattern)}, "
            f"{best['gets']:.0f} GETs; {len(row['tied'])} more within its interval"
        )
        for p in row["tied"]:
            print(f"    tied: {name(p)}: {figure(p, pattern)}")
        print(
            f"    obstore/fsspec: best vs best {row['obstore_over_fsspec_best']:.2f} "
            f"({ratio_low:.2f}-{ratio_high:.2f}); same point median "
            f"{statistics.median(paired):.2f} ({min(paired):.2f}-{max(paired):.2f})"
        )
        if first is not None:
            winner = first[pattern]["best"]
            print(
                f"    the first latency's winner ({name(winner)}) here: "
                f"{worth(found, pattern, winner):.2f} of the best"
            )


def print_markdown(results: dict[float, dict[str, Any]]) -> None:
    first = next(iter(results))
    print(
        "\n| latency | pattern | best: layout, concurrency, client | median (95 %) | GETs "
        f"| also within the best's interval | the {first:g} ms pick here "
        "| obstore/fsspec, best vs best (95 %) | obstore/fsspec, same point: median (range) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for latency, found in results.items():
        for pattern in PATTERNS:
            row = found[pattern]
            best = row["best"]
            paired = row["obstore_over_fsspec_same_point"]
            winner = results[first][pattern]["best"]
            here = "-" if latency == first else f"{worth(found, pattern, winner):.2f}"
            tied = "; ".join(name(p) for p in row["tied"]) or "none"
            low, high = row["obstore_over_fsspec_best_95"]
            print(
                f"| {latency:g} ms | {pattern} | {name(best)} | {figure(best, pattern)} | "
                f"{best['gets']:.0f} | {tied} | {here} | "
                f"{row['obstore_over_fsspec_best']:.2f} ({low:.2f}-{high:.2f}) | "
                f"{statistics.median(paired):.2f} ({min(paired):.2f}-{max(paired):.2f}) |"
            )
    latencies = list(results)
    head = " | ".join(f"{p} {lat:g} ms" for p in PATTERNS for lat in latencies)
    print(f"\n| layout | concurrency | client | {head} |")
    print("|---|---|---|" + "---|" * (len(PATTERNS) * len(latencies)))
    keys = [key(p) for p in results[first]["full"]["points"]]
    for k in sorted(keys, key=lambda k: (k[2] != "obstore", k[0], k[1])):
        cells = []
        for pattern in PATTERNS:
            for latency in latencies:
                match = [p for p in results[latency][pattern]["points"] if key(p) == k]
                value = "-"
                if match:
                    p = match[0]
                    value = f"{p['median']:.1f}" if pattern == "full" else f"{p['ms']:.0f}"
                cells.append(value)
        print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")
    print("\n(full: MiB/s; spatial and timeseries: ms per read; medians of the repeats)")


def report(results: dict[float, dict[str, Any]], markdown: bool) -> None:
    first = None
    for latency, found in results.items():
        report_latency(latency, found, first)
        first = first or found
    if markdown:
        print_markdown(results)


def save(path: Path | None, results: dict[float, dict[str, Any]], seconds: dict) -> None:
    if path is not None:
        saved = {"results": {f"{k:g}": v for k, v in results.items()}, "seconds": seconds}
        path.write_text(json.dumps(saved, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", default="0,20,50", help="added per request (0,20,50)")
    parser.add_argument("--repeats", type=int, default=6, help="repeats per point (default 6)")
    parser.add_argument("--steps", type=int, default=2, help="spatial read steps (default 2)")
    parser.add_argument("--pixels", type=int, default=4, help="time series read (default 4)")
    parser.add_argument("--json", type=Path, help="also write every point here")
    parser.add_argument("--markdown", action="store_true", help="also print markdown tables")
    parser.add_argument("--from-json", type=Path, help="only report a --json of an earlier run")
    args = parser.parse_args()
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        report({float(k): v for k, v in saved["results"].items()}, args.markdown)
        return
    credentials()
    latencies = [float(v) for v in args.latency_ms.split(",")]
    results: dict[float, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    print(f"{load()}; server: moto on 127.0.0.1, through the delaying proxy")
    with moto_server() as server, tempfile.TemporaryDirectory(prefix="iotune-oslat-") as tmp:
        for latency in latencies:
            bucket = new_bucket(server)
            start = time.perf_counter()
            with endpoint_for(server, latency) as endpoint:
                text = SPEC.format(
                    latency=f"{latency:g}",
                    bucket=bucket,
                    endpoint=endpoint,
                    region=REGION,
                    steps=args.steps,
                    pixels=args.pixels,
                    repeats=args.repeats,
                )
                ds = iotune_run(
                    text, Path(tmp), f"lat{latency:g}", allowed=("ok", "not_applicable")
                )
            seconds[f"{latency:g}"] = time.perf_counter() - start
            results[latency] = analyse(ds)
            print(f"  {latency:g} ms: {seconds[f'{latency:g}']:.0f} s ({load()})", flush=True)
            save(args.json, results, seconds)
    report(results, args.markdown)
    print(f"\n{load()}; {sum(seconds.values()):.0f} s of sweeps")


if __name__ == "__main__":
    main()
