"""Fidelity on object storage: ``iotune run`` of a raw-object spec against a plain obstore loop.

Both read from the same S3 server, moto's server mode started here on
127.0.0.1 (``--latency-ms``: through ``tests/objectstore/proxy.py``, which
delays each request; this kernel has no netem), with the same part size and
the same ``request_concurrency``:

- ``iotune run SPEC`` in a new process (the CLI a user types): backend
  ``object``, a ``--size`` workload of random int16 (``{time: N, y: 1024, x:
  1024}``), ``part_size`` and ``request_concurrency`` fixed, the ``full``
  read, ``--repeats`` repeats (each writes the object, reads it with a new
  client and deletes it); its figures are the read throughputs of the repeats
  in ``results.nc``, after iotune's own untimed warm-up;
- a plain obstore loop: one object of the same size uploaded once by
  obstore's writer with the same part size (iotune's sweep deletes its
  objects), then per timed read a new ``S3Store``, ``get_async`` of the same
  ``part_size`` ranges under an ``asyncio.Semaphore(request_concurrency)``,
  each part landed in one array of the object's size (as any reader that
  returns one array must); one untimed read first, as iotune warms up.

``--rounds`` rounds alternate the two (who goes first alternates too).  The
figure is the ratio of the medians of all reads, iotune/plain, with a 95 %
bootstrap interval (resampling each side's reads) and the per-round ratios.

The second part measures what iotune adds per request, on small GETs: a 4 MiB
object read by the ``random`` pattern (boxes of 1 x 16 x 16 values; with
``coalesce: 1MiB`` one GET per box, one box after another) and the
``timeseries`` pattern (with ``coalesce: 0`` one 2-byte GET per step,
``request_concurrency`` in flight per pixel), against a plain loop making
exactly the same GETs (the ranges iotune's reader computes, checked against
the counts it recorded) in the same order and grouping.  Per-request
overhead = (iotune's read time - the plain loop's) / GETs, per round, from
the medians; also each side's median time to first byte.

``--slab-check`` is a diagnosis, not the benchmark: in this process, iotune's
raw-object reader driven slab by slab as the runner drives a ``full`` read,
with the runner's 32 MiB slabs and with slabs of ``part_size x
request_concurrency``, against the plain loop (``--rounds`` interleaved runs).

Run:

    .venv/bin/python benchmarks/objectstore_fidelity.py [--size 256MiB] [--part-size 16MiB]
        [--concurrency 8] [--repeats 5] [--rounds 3] [--random-ops 128]
        [--latency-ms MS] [--skip-full] [--skip-small] [--slab-check] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import iotune
from iotune.core.units import format_size, parse_size

MiB = 2**20
ROOT = Path(__file__).resolve().parents[1]
#: moto accepts any keys; these never leave 127.0.0.1
KEYS = {
    "AWS_ACCESS_KEY_ID": "iotune-bench",
    "AWS_SECRET_ACCESS_KEY": "iotune-bench-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}
REGION = "us-east-1"

FULL_SPEC = """version: 1
name: objectstore-fidelity
workload: {{shape: {{time: {steps}, y: 1024, x: 1024}}, dtype: int16, field: random}}
backend: object
storage: {{url: "s3://{bucket}/runs", endpoint: "{endpoint}", region: {region}}}
parameters: {{part_size: {part}, request_concurrency: {concurrency}}}
read: {{patterns: [full]}}
measure: {{repeats: {repeats}, noise_probes: 0}}
"""

SMALL_SHAPE = (32, 256, 256)  # int16: 4 MiB, kept in memory by moto (below its 5 MiB spool)
SMALL_SPEC = """version: 1
name: objectstore-requests
workload: {{shape: {{time: 32, y: 256, x: 256}}, dtype: int16, field: random}}
backend: object
storage: {{url: "s3://{bucket}/runs", endpoint: "{endpoint}", region: {region}}}
parameters: {{part_size: {part}, request_concurrency: {concurrency}, coalesce: [0, 1MiB]}}
read: {{patterns: [random, timeseries], random: {{ops: {ops}}}, timeseries: {{pixels: 4}}}}
measure: {{repeats: {repeats}, noise_probes: 0}}
"""
#: (pattern, coalesce) reads whose GETs are small: per-request overhead
SMALL_CASES = (("random", MiB), ("timeseries", 0))


# -- the server ---------------------------------------------------------------------


def credentials() -> dict[str, str]:
    """Set the bench keys in this process (obstore, boto3) and return them for children."""
    os.environ.update(KEYS)
    return KEYS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def moto_server() -> Iterator[tuple[str, int]]:
    """moto's S3 server on a free port of 127.0.0.1 for the block: ``(host, port)``."""
    port = _free_port()
    cmd = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto's server did not start") from None
                time.sleep(0.1)
        yield ("127.0.0.1", port)
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def endpoint_for(server: tuple[str, int], latency_ms: float | None) -> Iterator[str]:
    """The endpoint to use: the server itself, or a proxy adding ``latency_ms`` per request."""
    if latency_ms is None:
        yield f"http://{server[0]}:{server[1]}"
        return
    sys.path.insert(0, str(ROOT))
    from tests.objectstore.proxy import latency

    with latency(server, latency_ms / 1e3) as proxy:
        yield proxy.endpoint


def new_bucket(server: tuple[str, int]) -> str:
    import boto3

    name = f"iotune-bench-{time.monotonic_ns()}"
    client = boto3.client("s3", endpoint_url=f"http://{server[0]}:{server[1]}", region_name=REGION)
    client.create_bucket(Bucket=name)
    return name


def store(bucket: str, endpoint: str) -> Any:
    """A new plain obstore client (obstore's defaults; http allowed for the local server)."""
    from obstore.store import S3Store

    return S3Store(
        bucket,
        config={"endpoint": endpoint, "region": REGION},
        client_options={"allow_http": True},
    )


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


# -- iotune through the CLI ---------------------------------------------------------


def iotune_run(spec_text: str, work: Path, name: str, *, allowed: tuple[str, ...] = ("ok",)) -> Any:
    """``iotune run`` of ``spec_text`` in a new process; its results (every trial ``allowed``)."""
    spec = work / f"{name}.yaml"
    spec.write_text(spec_text)
    out = work / name
    cmd = [sys.executable, "-m", "iotune", "run", str(spec), "-o", str(out)]
    cmd += ["--scratch", str(work), "--overwrite", "--no-progress"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ | credentials())
    if done.returncode != 0:
        raise RuntimeError(f"iotune run {spec.name} failed:\n{done.stderr[-3000:]}")
    ds = iotune.open_results(out)
    counts = ds.iotune.counts()
    if "ok" not in counts or not set(counts) <= set(allowed):
        raise RuntimeError(f"trials of {spec.name} not ok: {counts} {ds['error'].values.ravel()}")
    return ds


# -- the plain loop -----------------------------------------------------------------

#: one GET: ``[start, end)``
Span = tuple[int, int]


async def _gets(
    client: Any, key: str, spans: list[Span], limit: asyncio.Semaphore, out: np.ndarray
) -> list[float]:
    import obstore as obs

    async def one(start: int, end: int) -> float:
        async with limit:
            sent = time.perf_counter()
            resp = await obs.get_async(client, key, options={"range": (start, end)})
            first = time.perf_counter() - sent
            data = await resp.bytes_async()
        out[start:end] = np.frombuffer(data, np.uint8)
        return first

    return list(await asyncio.gather(*(one(s, e) for s, e in spans)))


def plain_read(
    bucket: str, endpoint: str, key: str, size: int, groups: list[list[Span]], inflight: int
) -> tuple[float, list[float]]:
    """One read: a new client, each group's GETs together (``inflight`` at most), groups in turn.

    Returns the seconds and the time to first byte of each GET.
    """
    ttfb: list[float] = []

    async def run() -> None:
        client = store(bucket, endpoint)
        out = np.empty(size, np.uint8)
        for spans in groups:
            ttfb.extend(await _gets(client, key, spans, asyncio.Semaphore(inflight), out))

    start = time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - start, ttfb


def upload(bucket: str, endpoint: str, key: str, size: int, part: int, inflight: int) -> None:
    """Random bytes as one object through obstore's writer (multipart above one part)."""
    import obstore as obs

    rng = np.random.default_rng(1)
    with obs.open_writer(
        store(bucket, endpoint), key, buffer_size=part, max_concurrency=inflight
    ) as writer:
        for start in range(0, size, 32 * MiB):
            n = min(32 * MiB, size - start)
            writer.write(rng.integers(0, 256, n, dtype=np.uint8).data)


# -- statistics -----------------------------------------------------------------------


def ratio_interval(top: list[float], bottom: list[float], n: int = 10_000) -> tuple[float, float]:
    """95 % bootstrap interval of median(top) / median(bottom), each side resampled."""
    rng = np.random.default_rng(0)
    a, b = np.asarray(top), np.asarray(bottom)
    ratios = np.median(rng.choice(a, (n, a.size)), axis=1) / np.median(
        rng.choice(b, (n, b.size)), axis=1
    )
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def alternate(rounds: int, members: dict[str, Callable[[], Any]]) -> list[dict[str, Any]]:
    """``rounds`` rounds of every member, the order reversed every other round."""
    out = []
    for i in range(rounds):
        names = list(members) if i % 2 == 0 else list(members)[::-1]
        out.append({name: members[name]() for name in names})
        print(f"  round {i + 1}/{rounds} done ({load()})", flush=True)
    return out


# -- part 1: a 256 MiB full read ------------------------------------------------------


def full_spec(args: argparse.Namespace, bucket: str, endpoint: str, *, repeats: int) -> str:
    """The raw-object spec of the full read: the object's size, parts and GETs in flight."""
    return FULL_SPEC.format(
        steps=args.size // (2 * MiB),
        bucket=bucket,
        endpoint=endpoint,
        region=REGION,
        part=args.part_size,
        concurrency=args.concurrency,
        repeats=repeats,
    )


def full_read(args: argparse.Namespace, server: tuple[str, int], work: Path) -> dict[str, Any]:
    bucket = new_bucket(server)
    size, part, inflight = args.size, args.part_size, args.concurrency
    spans = [(s, min(s + part, size)) for s in range(0, size, part)]
    with endpoint_for(server, args.latency_ms) as endpoint:
        text = full_spec(args, bucket, endpoint, repeats=args.repeats)
        upload(bucket, endpoint, "plain/full.bin", size, part, inflight)

        def by_iotune() -> dict[str, Any]:
            ds = iotune_run(text, work, "full")
            read = ds["read_MiBps"].sel(pattern="full")
            gets = ds["read_requests"].sel(pattern="full", request="GET")
            return {
                "MiBps": [float(v) for v in read.values.ravel()],
                "ci": [
                    float(ds[f"read_MiBps_ci_{end}"].sel(pattern="full")) for end in ("low", "high")
                ],
                "gets": int(gets.median()),
                "ttfb_ms": float(ds["read_ttfb_median_ms"].sel(pattern="full").median()),
            }

        def by_plain() -> dict[str, Any]:
            plain_read(bucket, endpoint, "plain/full.bin", size, [spans], inflight)  # warm-up
            found = [
                plain_read(bucket, endpoint, "plain/full.bin", size, [spans], inflight)
                for _ in range(args.repeats)
            ]
            return {
                "MiBps": [size / MiB / s for s, _ in found],
                "gets": len(spans),
                "ttfb_ms": 1e3 * statistics.median(t for _, ttfb in found for t in ttfb),
            }

        rounds = alternate(args.rounds, {"iotune": by_iotune, "plain": by_plain})
    top = [v for r in rounds for v in r["iotune"]["MiBps"]]
    bottom = [v for r in rounds for v in r["plain"]["MiBps"]]
    per_round = [
        statistics.median(r["iotune"]["MiBps"]) / statistics.median(r["plain"]["MiBps"])
        for r in rounds
    ]
    return {
        "rounds": rounds,
        "iotune_MiBps": statistics.median(top),
        "plain_MiBps": statistics.median(bottom),
        "ratio": statistics.median(top) / statistics.median(bottom),
        "ratio_95": ratio_interval(top, bottom),
        "ratio_per_round": per_round,
    }


# -- part 2: small GETs ---------------------------------------------------------------


def small_groups(spec_text: str, pattern: str, coalesce: int, part: int) -> list[list[Span]]:
    """The GETs iotune's raw-object reader makes for ``pattern``, one group per selection."""
    from iotune.backends.object.raw import coalesced, split
    from iotune.backends.posix.backend import _runs
    from iotune.measuring.access import selections
    from iotune.specfile.parse import load_spec_text

    sweep = load_spec_text(spec_text)
    workload = sweep.workload
    groups = []
    for selection in selections(pattern, workload, sweep.read):
        offsets, run, _ = _runs(selection, workload.shape, workload.itemsize)
        if len(offsets) == 1:
            ranges = split(int(offsets[0]), run, part)
        else:
            ranges = coalesced(offsets, run, coalesce)
        groups.append([(start, end) for start, end, _ in ranges])
    return groups


def small_reads(args: argparse.Namespace, server: tuple[str, int], work: Path) -> dict[str, Any]:
    bucket = new_bucket(server)
    size = int(np.prod(SMALL_SHAPE)) * 2
    with endpoint_for(server, args.latency_ms) as endpoint:
        text = SMALL_SPEC.format(
            bucket=bucket,
            endpoint=endpoint,
            region=REGION,
            part=args.part_size,
            concurrency=args.concurrency,
            ops=args.random_ops,
            repeats=args.repeats,
        )
        upload(bucket, endpoint, "plain/small.bin", size, args.part_size, args.concurrency)
        cases = {case: small_groups(text, case[0], case[1], args.part_size) for case in SMALL_CASES}

        def by_iotune() -> dict[str, Any]:
            ds = iotune_run(text, work, "small")
            found = {}
            for (pattern, coalesce), groups in cases.items():
                point = ds.sel(pattern=pattern, coalesce=_label(ds, coalesce))
                gets = point["read_requests"].sel(request="GET").values.ravel()
                if not (gets == sum(map(len, groups))).all():
                    raise RuntimeError(f"{pattern}: iotune made {gets} GETs, the plain loop would")
                found[f"{pattern}/{coalesce}"] = {
                    "s": [float(v) for v in point["read_s"].values.ravel()],
                    "ttfb_ms": float(point["read_ttfb_median_ms"].median()),
                }
            return found

        def by_plain() -> dict[str, Any]:
            found = {}
            for (pattern, coalesce), groups in cases.items():
                key = "plain/small.bin"
                plain_read(bucket, endpoint, key, size, groups, args.concurrency)  # warm-up
                runs = [
                    plain_read(bucket, endpoint, key, size, groups, args.concurrency)
                    for _ in range(args.repeats)
                ]
                found[f"{pattern}/{coalesce}"] = {
                    "s": [s for s, _ in runs],
                    "ttfb_ms": 1e3 * statistics.median(t for _, ttfb in runs for t in ttfb),
                }
            return found

        rounds = alternate(args.rounds, {"iotune": by_iotune, "plain": by_plain})
    summary = {}
    for (pattern, coalesce), groups in cases.items():
        name, gets = f"{pattern}/{coalesce}", sum(map(len, groups))
        top = [v for r in rounds for v in r["iotune"][name]["s"]]
        bottom = [v for r in rounds for v in r["plain"][name]["s"]]
        per_round = [
            1e3
            * (statistics.median(r["iotune"][name]["s"]) - statistics.median(r["plain"][name]["s"]))
            / gets
            for r in rounds
        ]
        summary[name] = {
            "gets": gets,
            "selections": len(groups),
            "iotune_s": statistics.median(top),
            "plain_s": statistics.median(bottom),
            "ms_per_get": 1e3 * (statistics.median(top) - statistics.median(bottom)) / gets,
            "ms_per_get_per_round": per_round,
            "iotune_ttfb_ms": statistics.median(r["iotune"][name]["ttfb_ms"] for r in rounds),
            "plain_ttfb_ms": statistics.median(r["plain"][name]["ttfb_ms"] for r in rounds),
        }
    return {"rounds": rounds, "summary": summary}


# -- diagnosis: the runner's slabs -----------------------------------------------------


def slab_check(args: argparse.Namespace, server: tuple[str, int]) -> dict[str, Any]:
    """In process: iotune's raw-object reader driven slab by slab, as ``read_once`` drives it.

    With the runner's slabs (``SLAB_BUDGET``, 32 MiB) and with slabs of
    ``part_size x request_concurrency``, against the plain loop, ``--rounds``
    interleaved runs each.  A reader gathers one slab's GETs at a time: with
    32 MiB slabs of 16 MiB parts it never has more than 2 in flight.
    """
    from iotune.backends.object.raw import _ObjectReader, split
    from iotune.measuring.data import SLAB_BUDGET, slab_length
    from iotune.objectstore.target import Target
    from iotune.specfile.parse import load_spec_text

    bucket = new_bucket(server)
    size, part, inflight = args.size, args.part_size, args.concurrency
    spans = [(s, min(s + part, size)) for s in range(0, size, part)]
    params = {"part_size": part, "request_concurrency": inflight, "coalesce": MiB}
    with endpoint_for(server, args.latency_ms) as endpoint:
        text = full_spec(args, bucket, endpoint, repeats=1)
        sweep = load_spec_text(text)
        workload, target = sweep.workload, Target(sweep.storage)
        upload(bucket, endpoint, "plain/full.bin", size, part, inflight)

        def slabs(budget: int) -> list[tuple[slice]]:
            step, n = slab_length(workload, budget=budget), workload.shape[0]
            return [(slice(s, min(s + step, n)),) for s in range(0, n, step)]

        def by_reader(selections: list[tuple[slice]]) -> float:
            start = time.perf_counter()
            reader = _ObjectReader(target, "plain/full.bin", workload, params)
            for selection in selections:
                reader.read(selection)
            reader.close()
            return size / MiB / (time.perf_counter() - start)

        members: dict[str, Callable[[], float]] = {}
        for budget in (SLAB_BUDGET, max(SLAB_BUDGET, part * inflight)):
            selections = slabs(budget)
            step = selections[0][0].stop * size // workload.shape[0]
            gets = len(split(0, step, part))
            label = f"reader, {format_size(step)} slabs ({min(gets, inflight)} GETs in flight)"
            members[label] = lambda selections=selections: by_reader(selections)
        members["plain loop"] = lambda: (
            size / MiB / plain_read(bucket, endpoint, "plain/full.bin", size, [spans], inflight)[0]
        )
        for member in members.values():
            member()  # warm-up
        found: dict[str, list[float]] = {name: [] for name in members}
        for i in range(args.rounds):
            for name in list(members) if i % 2 == 0 else list(members)[::-1]:
                found[name].append(members[name]())
    plain = statistics.median(found["plain loop"])
    return {
        name: {"MiBps": values, "ratio": statistics.median(values) / plain}
        for name, values in found.items()
    }


def _label(ds: Any, coalesce: int) -> Any:
    """The coordinate value of ``coalesce`` in the results (a label or a number)."""
    for value in ds["coalesce"].values:
        text = str(value)
        if text == str(coalesce) or (text[:1].isdigit() and parse_size(text) == coalesce):
            return value
    raise KeyError(coalesce)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="256MiB", help="object size (default 256MiB)")
    parser.add_argument("--part-size", default="16MiB", help="GET range size (default 16MiB)")
    parser.add_argument("--concurrency", type=int, default=8, help="GETs in flight (default 8)")
    parser.add_argument("--repeats", type=int, default=5, help="reads per run (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--random-ops", type=int, default=128, help="boxes of the random read")
    parser.add_argument("--latency-ms", type=float, help="through the delaying proxy")
    parser.add_argument("--skip-full", action="store_true", help="only the small GETs")
    parser.add_argument("--skip-small", action="store_true", help="only the full read")
    parser.add_argument(
        "--slab-check",
        action="store_true",
        help="only the in-process check of the runner's slabs (iotune's reader, no CLI)",
    )
    parser.add_argument("--json", type=Path, help="also write every run here")
    args = parser.parse_args()
    args.size, args.part_size = parse_size(args.size), parse_size(args.part_size)
    if args.size % (2 * MiB):
        parser.exit(2, "objectstore_fidelity.py: --size must be a multiple of 2 MiB\n")
    credentials()
    report: dict[str, Any] = {"load_before": os.getloadavg()}
    print(f"{load()}; server: moto on 127.0.0.1", end="")
    print(f", {args.latency_ms} ms added per request" if args.latency_ms is not None else "")
    with moto_server() as server, tempfile.TemporaryDirectory(prefix="iotune-osfid-") as tmp:
        if args.slab_check:
            print(f"full read of {format_size(args.size)}, in process, {args.rounds} runs each:")
            report["slab_check"] = slab_check(args, server)
            for name, row in report["slab_check"].items():
                print(
                    f"  {name:<40} {statistics.median(row['MiBps']):7.1f} MiB/s, "
                    f"ratio to the plain loop {row['ratio']:.3f} "
                    f"(runs {', '.join(f'{v:.0f}' for v in row['MiBps'])})"
                )
            args.skip_full = args.skip_small = True
        if not args.skip_full:
            print(f"full read of {format_size(args.size)}:", flush=True)
            found = report["full"] = full_read(args, server, Path(tmp))
            low, high = found["ratio_95"]
            rounds = ", ".join(f"{r:.3f}" for r in found["ratio_per_round"])
            print(
                f"\nfull read, {format_size(args.size)}, parts {format_size(args.part_size)}, "
                f"{args.concurrency} in flight, {args.rounds} x {args.repeats} reads each:\n"
                f"  iotune {found['iotune_MiBps']:.1f} MiB/s, plain obstore "
                f"{found['plain_MiBps']:.1f} MiB/s: ratio {found['ratio']:.3f} "
                f"(95 % {low:.3f}-{high:.3f}; per round {rounds})"
            )
            ttfb = [(r["iotune"]["ttfb_ms"], r["plain"]["ttfb_ms"]) for r in found["rounds"]]
            print(
                "  median ms to first byte, iotune/plain per round: "
                + ", ".join(f"{a:.0f}/{b:.0f}" for a, b in ttfb)
            )
        if not args.skip_small:
            print("small GETs:", flush=True)
            found = report["small"] = small_reads(args, server, Path(tmp))
            print(f"\nsmall GETs on a 4 MiB object, {args.rounds} x {args.repeats} reads each:")
            for name, row in found["summary"].items():
                rounds = ", ".join(f"{v:.3f}" for v in row["ms_per_get_per_round"])
                print(
                    f"  {name:<14} {row['gets']:>5} GETs in {row['selections']:>4} selections: "
                    f"iotune {row['iotune_s'] * 1e3:8.1f} ms, plain {row['plain_s'] * 1e3:8.1f} "
                    f"ms; iotune adds {row['ms_per_get']:.3f} ms per GET (per round {rounds}); "
                    f"ttfb {row['iotune_ttfb_ms']:.2f} vs {row['plain_ttfb_ms']:.2f} ms"
                )
    report["load_after"] = os.getloadavg()
    print(load())
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
