"""A TCP proxy that delays each request, for object-store latency without netem.

This kernel has no ``netem``; an S3 request costs 10-200 ms before its first
byte on a real store, and the tests need that to show latency changing the
answer.  The proxy forwards both directions and holds the first bytes of each
new request (the first client bytes after the server last answered) for
``delay`` seconds, so every request pays one delay, however large its body.

It also counts the requests it forwards by method (``requests``), which tests
compare with iotune's own counts, and can answer every ``throttle_every``-th GET
with S3's ``503 SlowDown`` instead of forwarding it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)
SLOW_DOWN = (
    b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\n"
    + f"Content-Length: {len(_BODY)}\r\n\r\n".encode()
    + _BODY
)


METHODS = ("GET", "PUT", "HEAD", "POST", "DELETE")


def _request_line(data: bytes) -> tuple[str, str]:
    first = data.split(b"\r\n", 1)[0].decode("latin-1").split()
    return (first[0], first[1]) if len(first) >= 2 else ("?", "")


class LatencyProxy:
    """Listen on 127.0.0.1, forward to ``target``, delay each request by ``delay`` s."""

    def __init__(self, target: tuple[str, int], *, delay: float, throttle_every: int = 0) -> None:
        self.target = target
        self.delay = delay
        self.throttle_every = throttle_every
        self._gets = 0
        #: (method, path) of every request that reached the proxy, throttled ones included
        self.requests: list[tuple[str, str]] = []
        self.throttled = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._connection, "127.0.0.1", 0)
        )
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        new_request = asyncio.Event()
        new_request.set()

        async def upstream() -> None:
            while data := await reader.read(1 << 16):
                method, path = _request_line(data) if new_request.is_set() else ("", "")
                # a body sent after the server's "100 Continue" is not a new request
                if method in METHODS:  # the first bytes of a request: its latency
                    new_request.clear()
                    self.requests.append((method, path))
                    await asyncio.sleep(self.delay)
                    self._gets += method == "GET"
                    every = self.throttle_every
                    if method == "GET" and every and self._gets % every == 0:
                        self.throttled += 1
                        writer.write(SLOW_DOWN)  # a GET has no body: nothing else to drop
                        await writer.drain()
                        new_request.set()
                        continue
                up_writer.write(data)
                await up_writer.drain()
            up_writer.close()

        async def downstream() -> None:
            while data := await up_reader.read(1 << 16):
                new_request.set()
                writer.write(data)
                await writer.drain()
            writer.close()

        with contextlib.suppress(ConnectionError):
            await asyncio.gather(upstream(), downstream())

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LatencyProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        async def cancel_connections() -> None:
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(cancel_connections(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@contextlib.contextmanager
def latency(
    target: tuple[str, int], delay: float, *, throttle_every: int = 0
) -> Iterator[LatencyProxy]:
    """A running :class:`LatencyProxy` for the ``with`` block."""
    proxy = LatencyProxy(target, delay=delay, throttle_every=throttle_every).start()
    try:
        yield proxy
    finally:
        proxy.stop()
