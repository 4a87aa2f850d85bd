"""A fake Slack Web API on 127.0.0.1, served to the real ``slack-sdk`` AsyncWebClient.

It speaks the real JSON shapes of the methods the connector uses: ``auth.test``,
``conversations.list`` / ``info`` / ``history`` / ``replies`` and ``users.info``,
with cursor pagination (``response_metadata.next_cursor``, ``has_more``) and the
page anchoring Slack documents for ``conversations.history``: with ``oldest`` and no
``latest`` the page nearest ``oldest`` comes first and the cursor moves forward;
otherwise pages start at ``latest`` (or now) and move back. Messages inside a page
are newest first, as Slack sends them; replies are oldest first, parent first.

The test plays the workspace (``add_channel``, ``add_user``, ``post``, ``reply``)
and the failures: ``fail_next(method, error, status=..., headers=...)`` queues one
error answer (``ratelimited`` with a 429 and ``Retry-After``, ``missing_scope`` with
``needed``, ...) and ``garble_next`` a raw body (broken JSON, a proxy's HTML page);
a wrong token answers ``invalid_auth``, no token ``not_authed``,
``revoked`` answers ``token_revoked``. ``newest_pages_first`` makes history page
back from the newest even with only ``oldest`` (to prove the reader copes).
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Call:
    method: str
    params: dict[str, str]
    status: int
    error: str = ""


@dataclass
class FakeSlack:
    token: str = "xoxb-fake-token-1"
    team_id: str = "T0TEST01"
    team: str = "Acme"
    url: str = ""
    calls: list[Call] = field(default_factory=list)
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    replies: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_page: int = 1000
    revoked: bool = False
    newest_pages_first: bool = False
    server_seconds: float = 0.0
    """Time spent answering in the handlers (for benchmarks to set apart)."""
    handler_cpu_seconds: float = 0.0
    """CPU time of this thread in the handlers, outside their awaits (on a shared loop
    the HTTP stack's time is not in it)."""

    def __post_init__(self) -> None:
        self._failures: dict[str, list[tuple[int, dict[str, Any], dict[str, str]]]] = {}
        self._ids = itertools.count(1)
        self._last_ts: tuple[int, int] = (0, 0)
        self._runner: web.AppRunner | None = None
        self._by_ts: dict[str, Any] = {}
        self._raw_failures: dict[str, list[tuple[int, str, str]]] = {}
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cpu_clock = 0
        self._thread_cpu = 0.0

    async def start(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._serve)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/api/"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # --- served from a thread of its own (benchmarks) ----------------------------

    def start_thread(self, timeout: float = 10.0) -> str:
        """Serve from a thread with its own event loop, so that all the fake's CPU time
        (aiohttp's HTTP parsing and writing, the JSON, the handlers) is that thread's
        and ``server_cpu_seconds`` can tell it apart from the client's."""
        ready = threading.Event()
        failed: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # told to the caller, which raises it
                failed.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
                loop.run_until_complete(self.stop())
            finally:
                self._thread_cpu = time.thread_time()
                loop.close()

        thread = threading.Thread(target=serve, name="fake-slack", daemon=True)
        thread.start()
        if not ready.wait(timeout):
            raise RuntimeError(f"the fake Slack did not start within {timeout} s")
        if failed:
            raise failed[0]
        assert thread.ident is not None
        self._thread = thread
        self._cpu_clock = time.pthread_getcpuclockid(thread.ident)
        return self.url

    def stop_thread(self, timeout: float = 10.0) -> None:
        """Stop the server that ``start_thread`` started and wait for its thread."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if thread.is_alive():
            raise RuntimeError(f"the fake Slack did not stop within {timeout} s")

    @property
    def server_cpu_seconds(self) -> float:
        """The fake's CPU time: its whole thread's when served by ``start_thread`` (read
        from the thread's CPU clock, or kept as it ended); else only its handlers'."""
        if self._thread is None:
            return self.handler_cpu_seconds
        if self._thread.is_alive():
            return time.clock_gettime(self._cpu_clock)
        return self._thread_cpu

    # --- the workspace, as the test plays it --------------------------------

    def add_channel(self, name: str, channel_id: str | None = None, private: bool = False) -> str:
        channel_id = channel_id or f"C{next(self._ids):08d}"
        self.channels[channel_id] = {
            "id": channel_id,
            "name": name,
            "is_channel": not private,
            "is_group": private,
            "is_private": private,
            "is_archived": False,
            "is_member": True,
            "created": 1_600_000_000,
            "name_normalized": name,
            "num_members": 3,
        }
        self.messages[channel_id] = []
        return channel_id

    def add_user(
        self, user_id: str, display_name: str = "", real_name: str = "", name: str = ""
    ) -> None:
        self.users[user_id] = {
            "id": user_id,
            "team_id": self.team_id,
            "name": name or user_id.lower(),
            "real_name": real_name,
            "deleted": False,
            "is_bot": False,
            "profile": {"display_name": display_name, "real_name": real_name},
        }

    def post(
        self,
        channel_id: str,
        user: str | None,
        text: str,
        *,
        ago: float = 0.0,
        **extra: Any,
    ) -> str:
        """Post a top-level message ``ago`` seconds before now; returns its ts."""
        ts = self._ts(time.time() - ago)
        message: dict[str, Any] = {"type": "message", "ts": ts, "text": text}
        if user is not None:
            message["user"] = user
        message |= extra
        self.messages[channel_id].append(message)
        return ts

    def reply(
        self,
        channel_id: str,
        parent_ts: str,
        user: str | None,
        text: str,
        *,
        ago: float = 0.0,
        broadcast: bool = False,
        **extra: Any,
    ) -> str:
        """Reply in a thread (``broadcast``: also shown in the channel); returns its ts."""
        parent = next(m for m in self.messages[channel_id] if m["ts"] == parent_ts)
        ts = self._ts(time.time() - ago)
        message: dict[str, Any] = {
            "type": "message",
            "ts": ts,
            "text": text,
            "thread_ts": parent_ts,
            "parent_user_id": parent.get("user", ""),
        }
        if user is not None:
            message["user"] = user
        message |= extra
        self.replies.setdefault((channel_id, parent_ts), []).append(message)
        parent["thread_ts"] = parent_ts
        parent["reply_count"] = len(self.replies[(channel_id, parent_ts)])
        parent["latest_reply"] = ts
        parent.setdefault("reply_users", [])
        if user and user not in parent["reply_users"]:
            parent["reply_users"].append(user)
        if broadcast:
            self.messages[channel_id].append({**message, "subtype": "thread_broadcast"})
        return ts

    def edit(self, channel_id: str, ts: str, text: str) -> str:
        """Edit message ``ts`` (top level or reply) as its author; the channel's history
        gets a hidden ``message_changed`` event, as Slack's does. Returns the event's ts."""
        original = self._find(channel_id, ts)
        previous = {k: v for k, v in original.items() if k != "edited"}
        event_ts = self._ts(time.time())
        original["text"] = text
        original["edited"] = {"user": original.get("user", ""), "ts": event_ts}
        self._post_changed(channel_id, event_ts, original, previous)
        return event_ts

    def _post_changed(
        self, channel_id: str, event_ts: str, now: dict[str, Any], previous: dict[str, Any]
    ) -> None:
        """The hidden ``message_changed`` event Slack adds to the channel's history."""
        self.messages[channel_id].append(
            {
                "type": "message",
                "subtype": "message_changed",
                "hidden": True,
                "ts": event_ts,
                "channel": channel_id,
                "message": dict(now),
                "previous_message": previous,
            }
        )

    def delete(self, channel_id: str, ts: str) -> str:
        """Delete message ``ts``: it is gone from history and replies, which get a hidden
        ``message_deleted`` event instead — unless it has replies: then, as in Slack, it
        stays as a ``tombstone`` through a ``message_changed`` event. Returns its ts."""
        original = self._find(channel_id, ts)
        if self.replies.get((channel_id, ts)):  # a parent with replies: a tombstone stays
            previous = dict(original)
            event_ts = self._ts(time.time())
            original.update(text="This message was deleted.", subtype="tombstone", hidden=True)
            original.pop("user", None)
            self._post_changed(channel_id, event_ts, original, previous)
            return event_ts
        for kept in (self.messages[channel_id], *self.replies.values()):
            if any(m is original for m in kept):
                kept[:] = [m for m in kept if m is not original]
        event_ts = self._ts(time.time())
        self.messages[channel_id].append(
            {
                "type": "message",
                "subtype": "message_deleted",
                "hidden": True,
                "ts": event_ts,
                "channel": channel_id,
                "deleted_ts": ts,
                "previous_message": original,
            }
        )
        return event_ts

    def _find(self, channel_id: str, ts: str) -> dict[str, Any]:
        for message in self.messages[channel_id]:
            if message["ts"] == ts and message.get("subtype") != "thread_broadcast":
                return message
        for (channel, _), replies in self.replies.items():
            for message in replies:
                if channel == channel_id and message["ts"] == ts:
                    return message
        raise KeyError(ts)

    def fail_next(
        self,
        method: str,
        error: str,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        **body: Any,
    ) -> None:
        """Answer the next call of ``method`` with this error instead."""
        self._failures.setdefault(method, []).append(
            (status, {"ok": False, "error": error, **body}, headers or {})
        )

    def garble_next(
        self, method: str, text: str, *, status: int = 200, content_type: str = "application/json"
    ) -> None:
        """Answer the next call of ``method`` with this body as is (broken JSON, a proxy page)."""
        self._raw_failures.setdefault(method, []).append((status, text, content_type))

    def count(self, method: str, *, status: int | None = None, error: str | None = "") -> int:
        """Calls of ``method`` (by default the ones that succeeded; ``error=None``: any)."""
        return sum(
            1
            for c in self.calls
            if c.method == method
            and (status is None or c.status == status)
            and (error is None or c.error == error)
        )

    def _ts(self, at: float) -> str:
        seconds, micros = int(at), int((at % 1) * 1_000_000)
        if (seconds, micros) <= self._last_ts:  # keep every ts unique and increasing
            seconds, micros = self._last_ts[0], self._last_ts[1] + 1
            if micros >= 1_000_000:
                seconds, micros = seconds + 1, 0
        self._last_ts = (seconds, micros)
        return f"{seconds}.{micros:06d}"

    # --- HTTP ------------------------------------------------------------------

    async def _serve(self, request: web.Request) -> web.Response:
        started, cpu = time.perf_counter(), time.thread_time()
        method = request.match_info["method"]
        raw = self._raw_failures.get(method)
        if raw:
            status, text, content_type = raw.pop(0)
            self.calls.append(Call(method, dict(request.query), status, "raw"))
            return web.Response(status=status, text=text, content_type=content_type)
        params: dict[str, str] = dict(request.query)
        if request.method == "POST":
            # another task may run during the await: its CPU time is not the fake's
            self.handler_cpu_seconds += time.thread_time() - cpu
            form = await request.post()
            cpu = time.thread_time()
            params |= {k: str(v) for k, v in form.items()}
        status, body, headers = self._answer(method, params, request.headers)
        self.calls.append(Call(method, params, status, str(body.get("error", ""))))
        response = web.json_response(body, status=status, headers=headers)
        self.server_seconds += time.perf_counter() - started
        self.handler_cpu_seconds += time.thread_time() - cpu
        return response

    def _answer(
        self, method: str, params: dict[str, str], headers: Any
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        auth = str(headers.get("Authorization", ""))
        token = auth.removeprefix("Bearer ").strip() or params.get("token", "")
        if not token:
            return 200, {"ok": False, "error": "not_authed"}, {}
        if token != self.token:
            return 200, {"ok": False, "error": "invalid_auth"}, {}
        if self.revoked:
            return 200, {"ok": False, "error": "token_revoked"}, {}
        queued = self._failures.get(method)
        if queued:
            return queued.pop(0)
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return 200, {"ok": False, "error": "unknown_method"}, {}
        return 200, handler(params), {}

    def _m_auth_test(self, params: dict[str, str]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://acme.slack.com/",
            "team": self.team,
            "user": "mama",
            "team_id": self.team_id,
            "user_id": "UBOT0001",
            "bot_id": "BBOT0001",
            "is_enterprise_install": False,
        }

    def _m_conversations_list(self, params: dict[str, str]) -> dict[str, Any]:
        types = params.get("types", "public_channel").split(",")
        listed = [
            c
            for c in self.channels.values()
            if ("private_channel" if c["is_private"] else "public_channel") in types
        ]
        page, following = self._page(listed, params)
        return {"ok": True, "channels": page, "response_metadata": {"next_cursor": following}}

    def _m_conversations_info(self, params: dict[str, str]) -> dict[str, Any]:
        channel = self.channels.get(params.get("channel", ""))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        return {"ok": True, "channel": channel}

    def _m_conversations_history(self, params: dict[str, str]) -> dict[str, Any]:
        channel_id = params.get("channel", "")
        if channel_id not in self.channels:
            return {"ok": False, "error": "channel_not_found"}
        inclusive = params.get("inclusive") in ("1", "true")
        oldest, latest = params.get("oldest"), params.get("latest")
        keys, ordered = self._sorted(channel_id)
        low = 0 if oldest is None else _bound(keys, _key(oldest), not inclusive)
        high = len(keys) if latest is None else _bound(keys, _key(latest), inclusive)
        chosen = ordered[low:high]
        if latest is not None or oldest is None or self.newest_pages_first:
            chosen.reverse()  # pages start at the newest and move back
        page, following = self._page(chosen, params)
        return {
            "ok": True,
            "messages": sorted(page, key=lambda m: _key(m["ts"]), reverse=True),
            "has_more": bool(following),
            "pin_count": 0,
            "response_metadata": {"next_cursor": following},
        }

    def _sorted(self, channel_id: str) -> tuple[list[tuple[int, int]], list[dict[str, Any]]]:
        """The channel's messages by ts, cached while the list keeps its length and ends."""
        messages = self.messages[channel_id]
        shape = (len(messages), *(id(m) for m in messages[:1] + messages[-1:]))
        cached = self._by_ts.get(channel_id)
        if cached is None or cached[0] != shape:
            ordered = sorted(messages, key=lambda m: _key(m["ts"]))
            cached = (shape, ([_key(m["ts"]) for m in ordered], ordered))
            self._by_ts[channel_id] = cached
        return cached[1]

    def _m_conversations_replies(self, params: dict[str, str]) -> dict[str, Any]:
        channel_id, parent_ts = params.get("channel", ""), params.get("ts", "")
        if channel_id not in self.channels:
            return {"ok": False, "error": "channel_not_found"}
        parent = next((m for m in self.messages[channel_id] if m["ts"] == parent_ts), None)
        if parent is None:
            return {"ok": False, "error": "thread_not_found"}
        inclusive = params.get("inclusive") in ("1", "true")
        oldest, latest = params.get("oldest"), params.get("latest")
        chosen = [parent] + [
            m
            for m in self.replies.get((channel_id, parent_ts), [])
            if _within(m["ts"], oldest, latest, inclusive)
        ]
        page, following = self._page(chosen, params)
        return {
            "ok": True,
            "messages": page,
            "has_more": bool(following),
            "response_metadata": {"next_cursor": following},
        }

    def _m_users_info(self, params: dict[str, str]) -> dict[str, Any]:
        user = self.users.get(params.get("user", ""))
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "user": user}

    def _page(self, rows: list[dict[str, Any]], params: dict[str, str]) -> tuple[list[Any], str]:
        limit = min(int(params.get("limit") or 100), self.max_page)
        cursor = params.get("cursor") or ""
        offset = int(base64.b64decode(cursor).decode().split(":")[1]) if cursor else 0
        page = rows[offset : offset + limit]
        more = offset + limit < len(rows)
        following = base64.b64encode(f"next:{offset + limit}".encode()).decode() if more else ""
        return page, following


def _key(ts: str) -> tuple[int, int]:
    seconds, _, micros = ts.partition(".")
    return int(seconds), int((micros + "000000")[:6])


def _bound(keys: list[tuple[int, int]], key: tuple[int, int], after: bool) -> int:
    """Index of the first message past ``key`` (``after``) or at/past it."""
    return bisect.bisect_right(keys, key) if after else bisect.bisect_left(keys, key)


def _within(ts: str, oldest: str | None, latest: str | None, inclusive: bool) -> bool:
    key = _key(ts)
    if oldest is not None and (key < _key(oldest) or (key == _key(oldest) and not inclusive)):
        return False
    return not (
        latest is not None and (key > _key(latest) or (key == _key(latest) and not inclusive))
    )
