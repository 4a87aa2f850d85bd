"""A scripted fake of the Anthropic Messages API for the real Claude Code CLI.

The test plays the model: ``script(request_json)`` returns the content blocks
of the answer (text and tool_use) and the stop reason. Answers are streamed as
server-sent events exactly as the real API does: message_start, per block
content_block_start / _delta / _stop (tool input as input_json_delta),
message_delta with the stop reason, message_stop.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.app.backends.fake_http import FakeHttpServer, Request, sse

Block = dict[str, Any]
Script = Callable[[dict[str, Any]], tuple[list[Block], str]]


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def tool_use(name: str, arguments: dict[str, Any], call_id: str | None = None) -> Block:
    """A tool call; ``call_id`` names it (so its tool_result can be matched), else one is made."""
    block: Block = {"type": "tool_use", "name": name, "input": arguments}
    if call_id is not None:
        block["id"] = call_id
    return block


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the newest user message (strings and text blocks)."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
    return ""


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of the newest user message."""
    messages = body.get("messages", [])
    if not messages or messages[-1].get("role") != "user":
        return []
    content = messages[-1].get("content")
    if isinstance(content, str):
        return []
    return [b for b in content if b.get("type") == "tool_result"]


@dataclass
class FakeAnthropic:
    """Serves ``/v1/messages``; records every request body."""

    script: Script
    requests: list[dict[str, Any]] = field(default_factory=list)
    hold: threading.Event | None = None
    """While set to an unset Event, the first turn request waits (a turn in flight)."""
    holding: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self.server = FakeHttpServer(self._handle)
        self.changed = threading.Condition()

    def start(self) -> FakeAnthropic:
        self.server.start()
        return self

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        if self.hold is not None:
            self.hold.set()
        self.server.stop()

    def turn_requests(self) -> list[dict[str, Any]]:
        """Requests that carried our tools (the agent's turns, not side requests)."""
        return [r for r in self.requests if r.get("tools")]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 60.0) -> None:
        with self.changed:
            if not self.changed.wait_for(predicate, timeout):
                raise TimeoutError("the fake model did not see what the test waited for")

    async def _handle(self, request: Request) -> tuple[int, str, bytes]:
        if request.method != "POST" or not request.path.startswith("/v1/messages"):
            return 404, "application/json", b'{"type":"error"}'
        body = request.json()
        if request.path.startswith("/v1/messages/count_tokens"):
            return 200, "application/json", b'{"input_tokens": 10}'
        with self.changed:
            self.requests.append(body)
            self.changed.notify_all()
        if self.hold is not None and body.get("tools") and not self.hold.is_set():
            self.holding.set()
            with self.changed:
                self.changed.notify_all()
            # The fake model "thinks" until the test releases it (waited on a thread).
            await asyncio.get_running_loop().run_in_executor(None, self.hold.wait)
        if not body.get("tools"):
            blocks, stop = [text("ok")], "end_turn"  # side requests (titles, summaries)
        else:
            blocks, stop = self.script(body)
        payload = self._events(body.get("model", "fake"), blocks, stop)
        if not body.get("stream"):
            return 200, "application/json", json.dumps(self._message(body, blocks, stop)).encode()
        return 200, "text/event-stream", payload

    def _message(self, body: dict[str, Any], blocks: list[Block], stop: str) -> dict[str, Any]:
        content = [
            {**b, "id": b.get("id") or f"toolu_{next(self._ids)}"} if b["type"] == "tool_use" else b
            for b in blocks
        ]
        return {
            "id": f"msg_{next(self._ids)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def _events(self, model: str, blocks: list[Block], stop: str) -> bytes:
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": f"msg_{next(self._ids)}",
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 1},
                    },
                },
            )
        ]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {
                    "type": "tool_use",
                    "id": block.get("id") or f"toolu_{next(self._ids)}",
                    "name": block["name"],
                    "input": {},
                }
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return sse(events)
