"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real Claude Code.

The test plays the model: ``script`` sees each request body and returns the
reply, which is streamed back as the server-sent events the real API sends
(``message_start``, one ``content_block_start``/``_delta``/``_stop`` triple per
block, ``message_delta`` with the stop reason, ``message_stop``). Every request
body is kept, so a test can check what Claude Code sent to the model (tool
results, hook context).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One assistant message: its content blocks and why it stopped."""

    blocks: list[dict[str, Any]]
    stop_reason: str

    @classmethod
    def text(cls, text: str) -> Reply:
        return cls([{"type": "text", "text": text}], "end_turn")

    @classmethod
    def tool(cls, tool_use_id: str, name: str, arguments: dict[str, Any]) -> Reply:
        block = {"type": "tool_use", "id": tool_use_id, "name": name, "input": arguments}
        return cls([block], "tool_use")


Script = Callable[[dict[str, Any]], Reply]


def sse_events(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    """The streamed events of ``reply``, in the order the Messages API sends them."""
    usage = {"input_tokens": 10, "output_tokens": 1}
    yield {
        "type": "message_start",
        "message": {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        },
    }
    for index, block in enumerate(reply.blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield {"type": "content_block_start", "index": index, "content_block": start}
        yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": 5},
    }
    yield {"type": "message_stop"}


@dataclass
class FakeAnthropic:
    """The fake API server; use as a context manager, then point ``ANTHROPIC_BASE_URL``
    at ``base_url``."""

    script: Script
    requests: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    paths: list[str] = field(default_factory=list[str])
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.paths.append(self.path)
                if self.path.split("?")[0].endswith("/count_tokens"):
                    self._send("application/json", json.dumps({"input_tokens": 10}).encode())
                    return
                if not self.path.split("?")[0].endswith("/v1/messages"):
                    self._send("application/json", b'{"type":"error"}', status=404)
                    return
                with fake._lock:
                    fake.requests.append(body)
                reply = fake.script(body)
                model = str(body.get("model", "claude-fake"))
                if body.get("stream"):
                    events = sse_events(reply, model)
                    data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
                    self._send("text/event-stream", data.encode())
                else:
                    message = {
                        "id": "msg_fake",
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": reply.blocks,
                        "stop_reason": reply.stop_reason,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 5},
                    }
                    self._send("application/json", json.dumps(message).encode())

            def do_GET(self) -> None:
                with fake._lock:
                    fake.paths.append(self.path)
                self._send("application/json", b'{"type":"error"}', status=404)

            def _send(self, content_type: str, data: bytes, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
