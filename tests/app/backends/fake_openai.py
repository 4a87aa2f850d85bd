"""A scripted fake of the OpenAI Responses API for the real Codex CLI.

Codex posts ``/v1/responses`` and reads server-sent events; the minimum it
needs is ``response.output_item.done`` per output item (a whole
``function_call`` or ``message``) and then ``response.completed``. The test
plays the model: ``script(request_json)`` returns the output items.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.app.backends.fake_http import FakeHttpServer, Request, sse

Item = dict[str, Any]
Script = Callable[[dict[str, Any]], list[Item]]


def message(text: str) -> Item:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(name: str, arguments: dict[str, Any]) -> Item:
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}


def function_outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function_call_output items the request carries."""
    items = body.get("input") or []
    return [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]


def user_texts(body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("role") == "user":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("text"):
                    out.append(str(part["text"]))
    return out


@dataclass
class FakeResponses:
    script: Script
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self.server = FakeHttpServer(self._handle)
        self.changed = threading.Condition()

    def start(self) -> FakeResponses:
        self.server.start()
        return self

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        self.server.stop()

    async def _handle(self, request: Request) -> tuple[int, str, bytes]:
        if request.method != "POST" or not request.path.startswith("/v1/responses"):
            return 404, "application/json", b'{"error": {"message": "not found"}}'
        body = request.json()
        with self.changed:
            self.requests.append(body)
            self.changed.notify_all()
        events: list[tuple[str, dict[str, Any]]] = []
        for scripted in self.script(body):
            item = dict(scripted)
            item.setdefault("id", f"item_{next(self._ids)}")
            if item["type"] == "function_call":
                item.setdefault("call_id", f"call_{next(self._ids)}")
            events.append(
                ("response.output_item.done", {"type": "response.output_item.done", "item": item})
            )
        events.append(
            (
                "response.completed",
                {"type": "response.completed", "response": {"id": f"resp_{next(self._ids)}"}},
            )
        )
        return 200, "text/event-stream", sse(events)
