"""The object store's limit: large-object GET and PUT throughput, small-GET latency.

``iotune calibrate --storage URL`` is the object-store counterpart of the file
system's calibration (:mod:`iotune.runner.calibrate`).  One object of ``size``
bytes is PUT in ``part_size`` multipart parts and read back in ``part_size``
ranged GETs, with 1, 2, 4, ... requests in flight; the best of each becomes the
store's write and read limit.  Then a small object is read many times, one
request at a time, for the time to first byte a request costs.  Everything is
written in an area marked like a run's (``PREFIX/iotune-scratch-calibrate-*``)
and removed afterwards, also when the measurement fails or is interrupted.
The result is cached beside the file systems' under
:func:`~iotune.runner.calibrate.store_key` (scheme, endpoint and bucket), where
:func:`~iotune.runner.calibrate.load_limit` finds it for a sweep's ``storage``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import statistics
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from iotune.core.errors import UsageError
from iotune.core.units import format_size, parse_size
from iotune.model.spec import StorageSpec
from iotune.objectstore.meter import Meter
from iotune.objectstore.retry import retrying, retrying_sync
from iotune.objectstore.scratch import mark, new_area, remove_area
from iotune.objectstore.target import Target
from iotune.runner.calibrate import store, store_key

logger = logging.getLogger(__name__)
MiB = 2**20
DEFAULT_SIZE = 256 * MiB
DEFAULT_PART = 8 * MiB
DEFAULT_IN_FLIGHT = (1, 2, 4, 8, 16)
DEFAULT_SMALL_GETS = 50
SMALL_OBJECT = 4096
#: S3's smallest multipart part (all but the last); GCS and Azure accept it too
MIN_PART = 5 * MiB
KIND = "object store"
#: the storage section's fields as the command line names them
OPTIONS = {f"storage.{k}": f"--{k}" for k in ("endpoint", "region")} | {"storage.url": "--storage"}


def storage_from_options(
    url: str, *, endpoint: str | None = None, region: str | None = None, anonymous: bool = False
) -> StorageSpec:
    """A ``storage`` section from command-line options, validated as a spec's.

    Raises
    ------
    UsageError
        A bad value; the message names the option (``--storage``, ``--endpoint``).
    """
    from iotune.core.errors import SpecError
    from iotune.specfile.storage import parse_storage

    section: dict[str, Any] = {"url": url, "anonymous": anonymous}
    section |= {k: v for k, v in (("endpoint", endpoint), ("region", region)) if v is not None}
    try:
        return parse_storage(section)
    except SpecError as err:
        raise UsageError(f"{OPTIONS.get(err.field, err.field)}: {err.message}") from err


def calibrate_storage(
    storage: str | StorageSpec,
    *,
    endpoint: str | None = None,
    region: str | None = None,
    anonymous: bool = False,
    size: int | str = DEFAULT_SIZE,
    part_size: int | str = DEFAULT_PART,
    request_concurrency: str | Sequence[int] = DEFAULT_IN_FLIGHT,
    repeats: int = 1,
    small_gets: int = DEFAULT_SMALL_GETS,
    save: bool = True,
) -> dict[str, Any]:
    """Measure an object store's limit and remember it for sweeps with that ``storage``.

    The pre-flight check runs first (a wrong endpoint, bucket or credentials is
    one line within seconds).  One object is PUT in parts and read in ranged
    GETs at each number of requests in flight; the best PUT and GET become the
    store's write and read limits, which sweeps on that store (same scheme,
    endpoint and bucket) carry as ``fraction_of_limit``.  Its objects live in an
    area marked like a run's, removed afterwards, also on errors and Ctrl-C
    (``iotune clean --storage`` removes them after a SIGKILL).

    Parameters
    ----------
    storage
        ``s3://bucket/prefix`` (or ``gs://``, ``az://``, ``file://``), as a
        spec's ``storage.url``, or a sweep's ``storage`` section.
    endpoint, region, anonymous
        As the spec's ``storage`` keys (with a URL); credentials come from the
        environment or ``~/.aws``, never from here.
    size
        Bytes of the large object (``"256MiB"``); rounded up to whole parts.
    part_size
        Bytes per multipart part and per ranged GET, at least 5MiB.
    request_concurrency
        Requests in flight to measure at (numbers, or ``"1,2,4,8,16"``); each
        at most the object's parts.
    repeats
        PUT-then-GET passes per level; each level's figure is their median.
    small_gets
        GETs of a 4KiB object, one at a time on an open connection, for the
        median and 99th percentile time to first byte.
    save
        Store the result in :func:`~iotune.runner.calibrate.cache_path`.

    Returns
    -------
    dict
        ``write_MiBps`` and ``read_MiBps`` (the best PUT and GET levels),
        ``levels`` (each level's figures), ``small_get`` (latency in ms),
        ``retries`` (throttled requests sent again), the methods and the store.

    Raises
    ------
    UsageError
        An option that is not allowed (named).
    StorageError
        The store cannot be reached or used (one line; exit code 2).
    """
    if isinstance(storage, str):
        storage = storage_from_options(
            storage, endpoint=endpoint, region=region, anonymous=anonymous
        )
    from iotune.objectstore.check import StorageError, check, explain

    size, part, levels = _check_args(size, part_size, request_concurrency, repeats, small_gets)
    base = Target(storage)
    check(base)
    meter = Meter()  # counts the throttled requests sent again, over the whole calibration
    area = new_area(base, "calibrate")
    try:  # marked inside: an interruption right after the mark's PUT still removes it
        mark(area, os.getpid())
        measured = _measure(area, size, part, levels, repeats, meter)
        latency = _small_gets(area, small_gets, meter)
    except Exception as err:  # obstore's own classes: one line, as the check says them
        raise StorageError(f"storage.url {storage.url}: {explain(err)}") from err
    finally:
        _close_area(area)
    result = _describe(storage, measured, latency, size=size, part=part, repeats=repeats)
    result["retries"] = meter.retries
    if save:
        store(result)
    return result


def clean_storage(url: str, *, endpoint: str | None = None, region: str | None = None) -> list[str]:
    """``iotune clean --storage``: :func:`iotune.objectstore.scratch.clean` of a URL's store."""
    from iotune.objectstore.scratch import clean

    return clean(Target(storage_from_options(url, endpoint=endpoint, region=region)))


def _describe(
    storage: StorageSpec,
    measured: list[dict[str, Any]],
    latency: dict[str, Any],
    *,
    size: int,
    part: int,
    repeats: int,
) -> dict[str, Any]:
    """The calibration as cached: the best levels as the limits, how, and of which store."""
    best_put = max(measured, key=lambda level: level["put_MiBps"])
    best_get = max(measured, key=lambda level: level["get_MiBps"])
    levels = [level["in_flight"] for level in measured]
    span = f"{levels[0]}-{levels[-1]}" if len(levels) > 1 else str(levels[0])
    return {
        "kind": KIND,
        "key": store_key(storage),
        "write_MiBps": best_put["put_MiBps"],
        "read_MiBps": best_get["get_MiBps"],
        "write_in_flight": best_put["in_flight"],
        "read_in_flight": best_get["in_flight"],
        "write_method": f"{'multipart ' if size > part else ''}PUT in {format_size(part)} parts, "
        f"best of {span} in flight ({best_put['in_flight']})",
        "read_method": f"{format_size(part)} ranged GETs by a new client, best of {span} in "
        f"flight ({best_get['in_flight']})",
        "levels": measured,
        "small_get": latency,
        "size_bytes": size,
        "part_bytes": part,
        "repeats": repeats,
        "storage_url": storage.url,
        "endpoint": storage.endpoint or "",
        "region": storage.region or "",
        "bucket": storage.bucket,
        "host": socket.gethostname(),  # where the requests came from; the store is shared
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _check_args(
    size: int | str,
    part_size: int | str,
    request_concurrency: str | Sequence[int],
    repeats: int,
    small_gets: int,
) -> tuple[int, int, list[int]]:
    sizes = []
    for name, value in (("--size", size), ("--part-size", part_size)):
        try:
            sizes.append(parse_size(value))
        except ValueError as err:
            raise UsageError(f"{name}: {err}") from err
    size, part = sizes
    if part < MIN_PART:
        raise UsageError(
            f"--part-size: {format_size(part)}; allowed: at least 5MiB (S3's smallest part)"
        )
    levels = _levels(request_concurrency)
    parts = -(-size // part)
    if levels[-1] > parts:
        raise UsageError(
            f"--request-concurrency: {levels[-1]} in flight needs at least {levels[-1]} parts, "
            f"but --size {format_size(size)} is {parts} of {format_size(part)}; allowed: a "
            f"--size of at least {format_size(levels[-1] * part)}"
        )
    if repeats < 1:
        raise UsageError(f"--repeats: {repeats}; allowed: at least 1")
    if small_gets < 1:
        raise UsageError(f"small_gets: {small_gets}; allowed: at least 1")
    return parts * part, part, levels


def _levels(value: str | Sequence[int]) -> list[int]:
    """Requests in flight, from numbers or ``"1,2,4"``; ascending, each once."""
    allowed = "allowed: whole numbers of at least 1, e.g. 1,2,4,8,16"
    try:
        levels = [int(n) for n in value.split(",")] if isinstance(value, str) else list(value)
    except ValueError as err:
        raise UsageError(f"--request-concurrency: {value!r}; {allowed}") from err
    if not levels or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in levels):
        raise UsageError(f"--request-concurrency: {value!r}; {allowed}")
    return sorted(set(levels))


def _close_area(area: Target) -> None:
    """Remove the area; said, not raised, when that fails (the error in flight matters more)."""
    try:
        remove_area(area)
    except Exception as err:  # obstore raises its own classes, not only OSError
        logger.warning(
            "could not remove the calibration's objects under %s (%s): iotune clean --storage %s",
            area.url(area.key()),
            err,
            area.spec.url,
        )


def _measure(
    area: Target, size: int, part: int, levels: list[int], repeats: int, meter: Meter
) -> list[dict[str, Any]]:
    """PUT then GET the large object at each level; each level's median of ``repeats``."""
    # incompressible bytes: a store or proxy that compresses must not look faster
    data = np.random.default_rng(0).bytes(size)
    key = area.key("large.bin")
    found = []
    for in_flight in levels:
        puts, gets = [], []
        for _ in range(repeats):
            puts.append(_put_pass(area, key, data, part, in_flight, meter))
            gets.append(_get_pass(area, key, size, part, in_flight, meter))
        put_s, get_s = statistics.median(puts), statistics.median(gets)
        found.append(
            {
                "in_flight": in_flight,
                "put_MiBps": size / MiB / put_s,
                "get_MiBps": size / MiB / get_s,
                "put_s": puts,
                "get_s": gets,
            }
        )
    return found


def _put_pass(
    area: Target, key: str, data: bytes, part: int, in_flight: int, meter: Meter
) -> float:
    """Seconds for one multipart PUT of ``data`` with ``in_flight`` parts at once."""
    import obstore as obs

    store = area.obstore()
    t0 = time.perf_counter()
    retrying_sync(
        lambda: obs.put(store, key, data, chunk_size=part, max_concurrency=in_flight),
        meter,
    )
    return time.perf_counter() - t0


def _get_pass(area: Target, key: str, size: int, part: int, in_flight: int, meter: Meter) -> float:
    """Seconds to fetch the object in ``part`` ranges, ``in_flight`` at once, by a new client.

    A new client opens new connections, as a trial's cold read does.
    """
    import obstore as obs

    store = area.obstore()

    async def fetch(start: int, limit: asyncio.Semaphore) -> int:
        end = min(start + part, size)

        async def get() -> int:
            resp = await obs.get_async(store, key, options={"range": (start, end)})
            return len(await resp.bytes_async())

        async with limit:
            got = await retrying(get, meter)
        if got != end - start:
            raise OSError(f"GET of bytes {start}-{end} of {area.url(key)} returned {got} bytes")
        return got

    async def fetch_all() -> None:
        limit = asyncio.Semaphore(in_flight)
        await asyncio.gather(*(fetch(start, limit) for start in range(0, size, part)))

    t0 = time.perf_counter()
    asyncio.run(fetch_all())
    return time.perf_counter() - t0


def _small_gets(area: Target, count: int, meter: Meter) -> dict[str, Any]:
    """Time to first byte and to the last of ``count`` GETs of a 4KiB object, one at a time."""
    import obstore as obs

    store = area.obstore()
    key = area.key("small.bin")
    obs.put(store, key, np.random.default_rng(1).bytes(SMALL_OBJECT))

    async def one() -> tuple[float, float]:
        async def get() -> tuple[float, float]:
            sent = time.perf_counter()
            resp = await obs.get_async(store, key)
            first = time.perf_counter() - sent
            await resp.bytes_async()
            return first, time.perf_counter() - sent

        return await retrying(get, meter)

    async def all_of() -> list[tuple[float, float]]:
        await one()  # opens the connection: its set-up is not a request's latency
        return [await one() for _ in range(count)]

    times = np.asarray(asyncio.run(all_of())) * 1e3
    first, total = times[:, 0], times[:, 1]
    return {
        "count": count,
        "size_bytes": SMALL_OBJECT,
        "ttfb_ms_median": float(np.median(first)),
        "ttfb_ms_p99": float(np.percentile(first, 99)),
        "total_ms_median": float(np.median(total)),
        "total_ms_p99": float(np.percentile(total, 99)),
    }
