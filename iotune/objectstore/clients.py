"""Clients whose every request is metered: Zarr stores and fsspec filesystems.

obstore gives no per-request hook, so the Zarr store over it
(:class:`iotune.objectstore.zarr_store.MeteredObjectStore`) makes each call
itself, times its first byte, retries throttling and records it.  s3fs runs
on aiobotocore, whose event system reports each request: an aiobotocore
session made by :func:`metered_session` records the operation, the bytes, the
time from sending to the response headers and botocore's retry count.
"""

from __future__ import annotations

import time
from typing import Any

from iotune.objectstore.meter import Meter
from iotune.objectstore.target import Target

#: botocore operation -> request kind
OPERATIONS = {
    "GetObject": "GET",
    "PutObject": "PUT",
    "UploadPart": "PUT",
    "HeadObject": "HEAD",
    "HeadBucket": "HEAD",
    "ListObjectsV2": "LIST",
    "ListObjects": "LIST",
    "DeleteObject": "DELETE",
    "DeleteObjects": "POST",
    "CreateMultipartUpload": "POST",
    "CompleteMultipartUpload": "POST",
    "AbortMultipartUpload": "DELETE",
}


def metered_session(meter: Meter) -> Any:
    """An aiobotocore session whose clients record each S3 request in ``meter``."""
    from aiobotocore.session import AioSession

    session = AioSession()

    def before_send(request: Any, **_: Any) -> None:
        request.context["iotune_sent"] = time.perf_counter()

    def after_call(http_response: Any, parsed: Any, model: Any, context: Any, **_: Any) -> None:
        kind = OPERATIONS.get(model.name, "GET" if model.http.get("method") == "GET" else "POST")
        sent = context.get("iotune_sent")
        ttfb = time.perf_counter() - sent if sent is not None and kind == "GET" else None
        length = int(http_response.headers.get("content-length", 0) or 0)
        retries = int(parsed.get("ResponseMetadata", {}).get("RetryAttempts", 0))
        body = int(context.get("iotune_body", 0))
        received = length if kind == "GET" else 0
        meter.record(kind, received=received, sent=body, ttfb=ttfb, retries=retries)

    def body_size(params: Any, **_: Any) -> None:
        body = params.get("body")
        params["context"]["iotune_body"] = len(body) if isinstance(body, bytes | bytearray) else 0

    session.register("before-send.s3", before_send)
    session.register("before-call.s3", body_size)
    session.register("after-call.s3", after_call)
    return session


def fsspec_filesystem(target: Target, meter: Meter, *, asynchronous: bool = False) -> Any:
    """A new fsspec filesystem for ``target`` whose requests go to ``meter``."""
    session = metered_session(meter) if target.spec.scheme == "s3" else None
    return target.fsspec(session=session, asynchronous=asynchronous)


def close_fsspec(fs: Any) -> None:
    """Close an s3fs filesystem's connections now, in the event loop that opened them.

    s3fs closes a synchronous filesystem's session only when it is collected
    and an asynchronous one's never (aiohttp then warns "Unclosed client
    session"); each read here makes a new filesystem, so each is closed.
    """
    creator = getattr(fs, "_s3creator", None)  # s3fs's own handle on the aiobotocore client
    if creator is None:
        return
    fs._s3, fs._s3creator = None, None
    if fs.asynchronous:
        from zarr.core.sync import sync as zarr_sync

        zarr_sync(creator.__aexit__(None, None, None))
    else:
        from fsspec.asyn import sync

        sync(fs.loop, creator.__aexit__, None, None, None)


def run_cancellable(loop: Any, coro: Any) -> Any:
    """Run ``coro`` in ``loop`` (another thread's) and wait; cancel it if the wait is interrupted.

    fsspec's own ``sync`` leaves the coroutine running when SIGINT or SIGTERM
    interrupts the caller: an upload would go on, and could complete after the
    run removed its objects.  Here it is cancelled and waited for.
    """
    import asyncio
    import threading

    finished = threading.Event()

    async def runner() -> Any:
        try:
            return await coro
        finally:
            finished.set()

    future = asyncio.run_coroutine_threadsafe(runner(), loop)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        finished.wait(30)
        raise


def zarr_store(target: Target, key: str, *, client: str, meter: Meter, read_only: bool) -> Any:
    """A new Zarr store at ``key`` through ``client`` (obstore or fsspec), metered."""
    if client == "obstore":
        from iotune.objectstore.zarr_store import MeteredObjectStore

        return MeteredObjectStore(target.obstore(prefix=key), meter=meter, read_only=read_only)
    from zarr.storage import FsspecStore

    fs = fsspec_filesystem(target, meter, asynchronous=True)
    if target.spec.scheme == "file":
        from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper

        fs = AsyncFileSystemWrapper(fs)
    return FsspecStore(fs, path=target.fsspec_path(key), read_only=read_only)
