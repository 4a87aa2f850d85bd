"""A fake Telegram Bot API on 127.0.0.1, served to the real python-telegram-bot client.

A small HTTP/1.1 server on asyncio (keep-alive, Content-Length bodies): the
client posts form-urlencoded bodies whose values are JSON (strings raw).
``getUpdates`` long-polls the queue the test fills with ``push_message`` /
``push_callback``; ``sendMessage`` and friends are recorded. ``push_message`` takes
``extra`` fields (``forward_origin``, ``reply_to_message``, ``quote``,
``external_reply``) and a ``chat_type``; ``deleteMessage`` is recorded in
``deleted``. ``down`` makes
named methods (or all, ``"*"``) answer 502, and ``rate_limit_next`` answers
the next sendMessage with a 429 and a retry_after, like the real server.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from tests.app.runtime.support import Signal

REASONS = {200: "OK", 401: "Unauthorized", 429: "Too Many Requests", 502: "Bad Gateway"}
STRING_FIELDS = {"text", "parse_mode", "callback_query_id", "action", "caption", "data"}
BOT = {
    "id": 999,
    "is_bot": True,
    "first_name": "MAMA",
    "username": "mama_test_bot",
    "can_join_groups": False,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    status: int


@dataclass
class FakeBotApi:
    token: str = "123456:TEST-token"
    calls: list[Call] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    edits: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)
    deleted: list[tuple[int, int]] = field(default_factory=list)
    down: set[str] = field(default_factory=set)
    rate_limit_next: int = 0
    signal: Signal = field(default_factory=Signal)

    def __post_init__(self) -> None:
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(5000)
        self._arrived = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self.url = ""

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()
        for task in list(self._handlers):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            await self._server.wait_closed()

    # --- what the test does as Telegram users ---------------------------

    def push_message(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        username: str = "owner",
        *,
        chat_type: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> int:
        message_id = next(self._message_ids)
        kind = chat_type or ("private" if chat_id > 0 else "group")
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": {
                "id": chat_id,
                "type": kind,
                "title": None if kind == "private" else kind,
            },
            "from": {"id": user_id, "is_bot": False, "first_name": username, "username": username},
            "text": text,
        }
        if text.startswith("/"):
            length = len(text.split(" ", 1)[0])
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": length}]
        message["chat"] = {k: v for k, v in message["chat"].items() if v is not None}
        message |= extra or {}
        self._push({"message": message})
        return message_id

    def push_callback(self, user_id: int, message: dict[str, Any], data: str) -> str:
        query_id = f"cb{next(self._update_ids)}"
        self._push(
            {
                "callback_query": {
                    "id": query_id,
                    "from": {"id": user_id, "is_bot": False, "first_name": "u"},
                    "chat_instance": "ci",
                    "data": data,
                    "message": message,
                }
            }
        )
        return query_id

    def _push(self, body: dict[str, Any]) -> None:
        self._updates.append({"update_id": next(self._update_ids), **body})
        self._arrived.set()

    # --- what the test inspects -----------------------------------------

    def texts_to(self, chat_id: int) -> list[str]:
        return [m["text"] for m in self.sent if m["chat"]["id"] == chat_id]

    def failed(self, method: str) -> int:
        return sum(1 for c in self.calls if c.method == method and c.status != 200)

    # --- HTTP -----------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    return
                headers: dict[str, str] = {}
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                path = request_line.decode("latin-1").split(" ")[1]
                status, payload = await self._route(path, headers, body)
                data = json.dumps(payload).encode()
                reason = REASONS.get(status, "X")
                writer.write(
                    f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(data)}\r\nConnection: keep-alive\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            return
        finally:
            self._handlers.discard(task)
            writer.close()

    async def _route(
        self, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, Any]]:
        prefix = f"/bot{self.token}/"
        if path.startswith("/bot") and not path.startswith(prefix):  # as Telegram answers
            self._record(path.rsplit("/", maxsplit=1)[-1], {}, 401)
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        if not path.startswith(prefix):
            return 404, {"ok": False, "error_code": 404, "description": "Not Found"}
        method = path[len(prefix) :]
        params = _parse(headers.get("content-type", ""), body)
        if "*" in self.down or method in self.down:
            self._record(method, params, 502)
            return 502, {"ok": False, "error_code": 502, "description": "Bad Gateway"}
        if method == "sendMessage" and self.rate_limit_next > 0:
            self.rate_limit_next -= 1
            self._record(method, params, 429)
            return 429, {
                "ok": False,
                "error_code": 429,
                "description": "Too Many Requests: retry after 1",
                "parameters": {"retry_after": 1},
            }
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            self._record(method, params, 200)
            return 200, {"ok": True, "result": True}
        result = await handler(params)
        self._record(method, params, 200)
        return 200, {"ok": True, "result": result}

    def _record(self, method: str, params: dict[str, Any], status: int) -> None:
        self.calls.append(Call(method, params, status))
        self.signal.notify()

    async def _m_getMe(self, params: dict[str, Any]) -> Any:
        return BOT

    async def _m_getUpdates(self, params: dict[str, Any]) -> Any:
        offset = int(params.get("offset") or 0)
        self._updates = [u for u in self._updates if u["update_id"] >= offset]
        if not self._updates:
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), float(params.get("timeout") or 0))
        return [u for u in self._updates if u["update_id"] >= offset]

    async def _m_sendMessage(self, params: dict[str, Any]) -> Any:
        chat_id = int(params["chat_id"])
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private"},
            "from": BOT,
            "text": params["text"],
        }
        if params.get("reply_markup"):
            message["reply_markup"] = params["reply_markup"]
        self.sent.append({**message, "params": params})
        return message

    async def _m_editMessageText(self, params: dict[str, Any]) -> Any:
        self.edits.append(params)
        return {
            "message_id": int(params.get("message_id") or 1),
            "date": int(time.time()),
            "chat": {"id": int(params.get("chat_id") or 1), "type": "private"},
            "text": params["text"],
        }

    async def _m_deleteMessage(self, params: dict[str, Any]) -> Any:
        self.deleted.append((int(params["chat_id"]), int(params["message_id"])))
        return True

    async def _m_answerCallbackQuery(self, params: dict[str, Any]) -> Any:
        self.answers.append(params)
        return True


def _parse(content_type: str, body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    if "json" in content_type:
        return dict(json.loads(body))
    out: dict[str, Any] = {}
    for key, values in urllib.parse.parse_qs(body.decode(), keep_blank_values=True).items():
        value = values[-1]
        if key in STRING_FIELDS:
            out[key] = value
            continue
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out
