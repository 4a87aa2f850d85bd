"""A tiny HTTP/1.1 server on asyncio for the fake model servers (127.0.0.1 only).

Requests are parsed by hand (Content-Length or chunked bodies); the handler
returns (status, content type, body bytes). Server-sent events are sent as one
buffered body, which the real clients read like any stream. It runs on its
own thread with its own loop, so a client that blocks (a subprocess the test
waits on) never stalls it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


Handler = Callable[[Request], Awaitable[tuple[int, str, bytes]]]


def sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    """Server-sent events: ``event: NAME`` and ``data: JSON`` per event."""
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


class FakeHttpServer:
    """Serve ``handler`` on 127.0.0.1 from a background thread."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-http", daemon=True)
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeHttpServer:
        self.loop = asyncio.new_event_loop()
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake server did not start")
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(BaseException):
                    await task

        loop = self.loop
        if loop is None:
            return
        if loop.is_running():
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)
        loop.close()

    def _run(self) -> None:
        assert self.loop is not None
        asyncio.set_event_loop(self.loop)

        async def boot() -> None:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()

        self.loop.run_until_complete(boot())
        self.loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, path, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    raw = await reader.readline()
                    if raw in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = raw.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                if headers.get("transfer-encoding", "").lower() == "chunked":
                    body = b""
                    while True:
                        size = int((await reader.readline()).strip().split(b";")[0], 16)
                        if size == 0:
                            await reader.readline()
                            break
                        body += await reader.readexactly(size)
                        await reader.readline()
                else:
                    body = await reader.readexactly(int(headers.get("content-length", "0")))
                status, ctype, data = await self.handler(Request(method, path, headers, body))
                writer.write(
                    f"HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\n"
                    f"Content-Length: {len(data)}\r\nConnection: keep-alive\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError, ValueError):
            return
        finally:
            writer.close()
