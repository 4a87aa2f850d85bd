"""A fake Trello REST API on 127.0.0.1, for the real ``httpx`` client of our connector.

It speaks the shapes Trello does: ``GET /1/members/me``, ``/1/members/me/boards``
and ``/1/boards/{id}/actions`` (newest first; ``since`` an action id or a date,
``before`` an action id, ``limit`` at most 1000; ``filter`` a list of types),
with ``key`` and ``token`` in the query (401 "invalid key" otherwise). Action
ids are ObjectId-like (a hex timestamp first), so they order by time as Trello's do.
``rate_limit_next`` answers the next requests 429 with ``Retry-After``;
``fail_next`` answers them with the listed statuses (a 502, say).

Runs on a thread (``ThreadingHTTPServer``), so a test's asyncio loop, a
``mama daemon`` subprocess and a benchmark can all reach it. ``python -m
tests.app.connectors.fake_trello --items N --port-file F`` serves N actions
until killed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

API_KEY = "fake-key"
TOKEN = "fake-token"
ME = {"id": "5f0000000000000000000001", "username": "owner", "fullName": "The Owner"}
PEOPLE = ("Anna Berg", "Ben Okafor", "Chen Li")
LISTS = ("To Do", "Doing", "Done")
_OBJECT_ID = re.compile(r"^[0-9a-f]{24}$")


@dataclass
class FakeTrello:
    """The boards, their actions, and what the client asked."""

    max_page: int = 1000
    boards: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    actions: dict[str, list[dict[str, Any]]] = field(
        default_factory=dict[str, list[dict[str, Any]]]
    )
    requests: list[tuple[str, dict[str, str]]] = field(
        default_factory=list[tuple[str, dict[str, str]]]
    )
    rate_limit_next: int = 0
    retry_after: str = "1"
    fail_next: list[int] = field(default_factory=list[int])
    start: datetime = field(default_factory=lambda: datetime.now(UTC) - timedelta(days=2))
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    # --- the data -------------------------------------------------------

    def add_board(self, name: str) -> str:
        n = len(self.boards) + 1
        board_id = f"{0x5E000000 + n:08x}{n:016x}"
        self.boards[board_id] = {
            "id": board_id,
            "name": name,
            "shortLink": f"b{n:07d}",
            "closed": False,
        }
        self.actions[board_id] = []
        return board_id

    def add_action(
        self,
        board_id: str,
        kind: str,
        data: dict[str, Any],
        *,
        who: str = PEOPLE[0],
        at: datetime | None = None,
    ) -> dict[str, Any]:
        """Append an action (newer than every other); returns it."""
        with self._lock:
            n = next(self._counter)
            when = at or (self.start + timedelta(seconds=n))
            action_id = f"{int(when.timestamp()):08x}{n:016x}"
            board = self.boards[board_id]
            action = {
                "id": action_id,
                "idMemberCreator": f"5f{n:022x}",
                "type": kind,
                "date": when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z",
                "data": {"board": {"id": board_id, "name": board["name"]}, **data},
                "memberCreator": {
                    "id": f"5f{n:022x}",
                    "fullName": who,
                    "username": who.split(maxsplit=1)[0].lower(),
                },
            }
            self.actions[board_id].append(action)
            return action

    def add_card_moves(self, board_id: str, count: int) -> list[str]:
        """``count`` actions of the everyday kinds (create, move, comment, due); their ids."""
        ids: list[str] = []
        for i in range(count):
            card = {"id": f"c{i:023x}", "name": f"Card {i}", "idShort": i, "shortLink": f"s{i:07d}"}
            who = PEOPLE[i % len(PEOPLE)]
            match i % 4:
                case 0:
                    action = self.add_action(
                        board_id, "createCard", {"card": card, "list": {"name": LISTS[0]}}, who=who
                    )
                case 1:
                    action = self.add_action(
                        board_id,
                        "updateCard",
                        {
                            "card": card,
                            "listBefore": {"name": LISTS[0]},
                            "listAfter": {"name": LISTS[1]},
                            "old": {"idList": "x"},
                        },
                        who=who,
                    )
                case 2:
                    action = self.add_action(
                        board_id,
                        "commentCard",
                        {"card": card, "text": f"comment number {i}"},
                        who=who,
                    )
                case _:
                    action = self.add_action(
                        board_id,
                        "updateCard",
                        {"card": {**card, "due": "2026-12-24T17:00:00.000Z"}, "old": {"due": None}},
                        who=who,
                    )
            ids.append(str(action["id"]))
        return ids

    # --- the API --------------------------------------------------------

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            self.requests.append((path, query))
            if self.fail_next:
                return self.fail_next.pop(0), "server trouble", {}
            if self.rate_limit_next > 0:
                self.rate_limit_next -= 1
                return (
                    429,
                    {"message": "API_TOKEN_LIMIT_EXCEEDED"},
                    {"Retry-After": self.retry_after},
                )
        if query.get("key") != API_KEY or query.get("token") != TOKEN:
            return 401, "invalid key", {}
        if path == "/1/members/me":
            return 200, ME, {}
        if path == "/1/members/me/boards":
            return 200, list(self.boards.values()), {}
        match = re.fullmatch(r"/1/boards/([^/]+)/actions", path)
        if match:
            board_id = match.group(1)
            if board_id not in self.actions:
                return 404, "The requested resource was not found.", {}
            return 200, self._actions(board_id, query), {}
        return 404, "Cannot GET " + path, {}

    def _actions(self, board_id: str, query: dict[str, str]) -> list[dict[str, Any]]:
        with self._lock:
            actions = list(self.actions[board_id])
        types = set(query.get("filter", "all").split(","))
        if "all" not in types:
            actions = [a for a in actions if a["type"] in types]
        since = query.get("since")
        if since:
            if _OBJECT_ID.match(since):
                actions = [a for a in actions if a["id"] > since]
            else:
                moment = datetime.fromisoformat(since.replace("Z", "+00:00"))
                actions = [
                    a
                    for a in actions
                    if datetime.fromisoformat(a["date"].replace("Z", "+00:00")) > moment
                ]
        before = query.get("before")
        if before:
            actions = [a for a in actions if a["id"] < before]
        limit = min(int(query.get("limit", "50")), self.max_page, 1000)
        return list(reversed(actions))[:limit]

    # --- serving --------------------------------------------------------

    def serve(self) -> str:
        """Start on a free port; the base URL (``http://127.0.0.1:PORT/1``)."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                status, body, headers = fake.answer(url.path, query)
                raw = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                kind = "text/plain" if isinstance(body, str) else "application/json"
                self.send_header("Content-Type", f"{kind}; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                return

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                return  # a client killed mid-request (the crash test's point) is no news

        server = Server(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, name="fake-trello", daemon=True).start()
        return f"http://127.0.0.1:{server.server_address[1]}/1"

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--board", default="Roadmap")
    parser.add_argument("--max-page", type=int, default=1000)
    parser.add_argument("--port-file", type=Path, required=True)
    args = parser.parse_args()
    fake = FakeTrello(max_page=args.max_page)
    fake.add_card_moves(fake.add_board(args.board), args.items)
    url = fake.serve()
    tmp = args.port_file.with_suffix(".tmp")
    tmp.write_text(url)
    tmp.replace(args.port_file)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
